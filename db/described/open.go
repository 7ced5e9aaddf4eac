package described

import "chaos/db"

// Lookup checks what --db names without touching any host: a built-in
// system of db's registry (nil description), or a description file,
// loaded and validated. Its errors are a *db.UnknownSystemError or an
// *Error.
func Lookup(name string) (*Description, error) {
	if IsPath(name) {
		return Load(name)
	}
	if !db.Known(name) {
		return nil, &db.UnknownSystemError{Name: name}
	}
	return nil, nil
}

// Open builds the system --db names for cfg: a built-in one by name, or
// the one a description file describes.
func Open(name string, cfg db.Config) (db.DB, error) {
	desc, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	if desc == nil {
		return db.New(name, cfg)
	}
	return New(desc, cfg)
}
