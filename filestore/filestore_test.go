package filestore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDirStoresContentAddressedFilesOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "files")
	d, err := NewDir(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sum := sha256.Sum256([]byte("%PDF-1.4 hello"))
	want := hex.EncodeToString(sum[:]) + ".pdf"
	for range 2 {
		obj, err := d.Put(ctx, strings.NewReader("%PDF-1.4 hello"), "pdf")
		if err != nil {
			t.Fatal(err)
		}
		if obj.Name != want || obj.Size != 14 {
			t.Fatalf("got %+v, want name %s and size 14", obj, want)
		}
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != want {
		t.Fatalf("directory holds %v, want only %s", entries, want)
	}
	for name, mode := range map[string]os.FileMode{path: 0o700, filepath.Join(path, want): 0o600} {
		if info, err := os.Stat(name); err != nil || info.Mode().Perm() != mode {
			t.Errorf("%s: mode %v (%v), want %v", name, info.Mode().Perm(), err, mode)
		}
	}
	rc, err := d.Open(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rc)
	_ = rc.Close()
	if string(got) != "%PDF-1.4 hello" {
		t.Errorf("read back %q", got)
	}
}

type failingReader struct{ err error }

func (r failingReader) Read([]byte) (int, error) { return 0, r.err }

func TestDirLeavesNothingBehindAFailedPut(t *testing.T) {
	d, err := NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tooLarge := errors.New("too large")
	_, err = d.Put(context.Background(), io.MultiReader(strings.NewReader("partial"), failingReader{tooLarge}), "png")
	if !errors.Is(err, tooLarge) {
		t.Fatalf("err = %v, want it to wrap the reader's error", err)
	}
	if entries, _ := os.ReadDir(d.path); len(entries) != 0 {
		t.Errorf("a failed put left %v", entries)
	}
	if _, err := d.Put(context.Background(), strings.NewReader("x"), "../x"); err == nil {
		t.Error("an extension with a path separator was accepted")
	}
}

func TestDirOpenRefusesOtherNames(t *testing.T) {
	d, err := NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"../etc/passwd", ".upload-1", strings.Repeat("a", 64) + ".png", "x.png"} {
		if _, err := d.Open(context.Background(), name); !errors.Is(err, ErrNotFound) {
			t.Errorf("Open(%q) = %v, want ErrNotFound", name, err)
		}
	}
}
