module chaos

go 1.26.8

require github.com/spf13/cobra v1.10.2

require (
	github.com/anishathalye/porcupine v1.3.1 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)
