package workload

import "math/rand/v2"

// Generator hands out the operations of a workload. Next is safe for
// concurrent use: every worker calls it with its own rng, so the random
// choices (which operation, which key) of one worker are reproducible from
// the seed, while values that must be unique across the test come from the
// generator's shared counter.
type Generator interface {
	// Next returns the next operation for a worker, drawing its random
	// choices from rng.
	Next(rng *rand.Rand) Op
}
