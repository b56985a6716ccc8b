package spotprices

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// bookFile is the JSON a book's file holds, and what GET /prices answers.
type bookFile struct {
	Prices []Price `json:"prices"`
}

// OpenFile returns a book kept in the JSON file at path, so the prices set in one run of
// `tidegate dev` are there in the next: it loads the file if it exists, and every Set rewrites it.
// A missing file is an empty book; a file that does not parse, or holds an invalid price, is an
// error rather than a silently emptied book.
func OpenFile(path string) (*Book, error) {
	b := &Book{prices: make(map[bookKey]Price), path: path}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return b, nil
	}
	if err != nil {
		return nil, fmt.Errorf("opening spot price book: %w", err)
	}
	var f bookFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("reading spot price book %s: %w", path, err)
	}
	for i, p := range f.Prices {
		if err := validate(p); err != nil {
			return nil, fmt.Errorf("reading spot price book %s: prices[%d]: %w", path, i, err)
		}
		b.prices[bookKey{p.Region, p.InstanceType}] = p
	}
	return b, nil
}

// writeFile replaces the file at path with prices. It writes a temporary file beside it and
// renames it over the old one, so a crash mid-write leaves the previous book, never half of one.
func writeFile(path string, prices []Price) error {
	data, err := json.MarshalIndent(bookFile{Prices: prices}, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding spot price book: %w", err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("saving spot price book: %w", err)
	}
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("saving spot price book: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op once the rename has happened
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("saving spot price book: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("saving spot price book: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("saving spot price book: %w", err)
	}
	return nil
}
