// Package filestore keeps uploaded files (KYC documents) under content-addressed names:
// "<sha256 of the bytes>.<extension>". The same bytes uploaded twice are stored once, a stored
// file never changes, and a name says nothing about who uploaded it: ownership is recorded in
// Postgres by the caller.
package filestore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
)

// ErrNotFound is returned by Open for a name that is not stored.
var ErrNotFound = errors.New("file not stored")

// Object is a stored file.
type Object struct {
	// Name is SHA256 + "." + the extension given to Put.
	Name   string
	SHA256 string
	Size   int64
}

// Dir stores files in one local directory, readable by the service's user only (0700, files
// 0600). Writes go to a temporary file in the same directory, renamed into place once complete:
// a reader never sees half a file, and a failed upload leaves nothing behind.
type Dir struct {
	path string
}

var (
	extPattern  = regexp.MustCompile(`^[a-z0-9]{1,8}$`)
	namePattern = regexp.MustCompile(`^[0-9a-f]{64}\.[a-z0-9]{1,8}$`)
)

// NewDir returns the store of a directory. The directory is created (0700) by the first Put,
// so that a service that never receives an upload leaves no trace on disk.
func NewDir(path string) (*Dir, error) {
	if path == "" {
		return nil, errors.New("file store: no directory given")
	}
	return &Dir{path: path}, nil
}

// Put stores what content yields under its SHA-256 and ext. An error from content (a size
// limit, a client gone) is returned as it is, wrapped, and nothing is stored.
func (d *Dir) Put(_ context.Context, content io.Reader, ext string) (Object, error) {
	if !extPattern.MatchString(ext) {
		return Object{}, fmt.Errorf("file store: invalid extension %q", ext)
	}
	if err := os.MkdirAll(d.path, 0o700); err != nil {
		return Object{}, fmt.Errorf("file store: create %s: %w", d.path, err)
	}
	tmp, err := os.CreateTemp(d.path, ".upload-*") // mode 0600
	if err != nil {
		return Object{}, fmt.Errorf("file store: create temporary file: %w", err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }() // a no-op once renamed
	h := sha256.New()
	size, err := io.Copy(io.MultiWriter(tmp, h), content)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Object{}, fmt.Errorf("file store: write: %w", err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	obj := Object{Name: sum + "." + ext, SHA256: sum, Size: size}
	if _, err := os.Stat(filepath.Join(d.path, obj.Name)); err == nil {
		return obj, nil // the same bytes are already stored
	}
	if err := os.Rename(tmp.Name(), filepath.Join(d.path, obj.Name)); err != nil {
		return Object{}, fmt.Errorf("file store: store %s: %w", obj.Name, err)
	}
	return obj, nil
}

// Open returns a stored file for reading; ErrNotFound when name is not stored (or is not a
// content-addressed name at all).
func (d *Dir) Open(_ context.Context, name string) (io.ReadCloser, error) {
	if !namePattern.MatchString(name) {
		return nil, ErrNotFound
	}
	f, err := os.Open(filepath.Join(d.path, name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("file store: open %s: %w", name, err)
	}
	return f, nil
}
