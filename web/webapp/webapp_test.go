package webapp

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"strings"
	"testing"
)

// TestVendoredFiles: each vendored file is the one scripts/vendor-web.sh recorded (its sha256
// in static/vendor/VERSIONS), with its licence beside it.
func TestVendoredFiles(t *testing.T) {
	raw, err := fs.ReadFile(sharedStatic, "static/vendor/VERSIONS")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(raw), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		if len(fields) != 4 {
			t.Fatalf("VERSIONS line %q: want file, package@version, licence, sha256", line)
		}
		n++
		data, err := fs.ReadFile(sharedStatic, "static/vendor/"+fields[0])
		if err != nil {
			t.Fatal(err)
		}
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != fields[3] {
			t.Errorf("%s differs from %s as vendored: run scripts/vendor-web.sh", fields[0], fields[1])
		}
		if _, err := fs.Stat(sharedStatic, "static/vendor/"+fields[0]+".LICENSE"); err != nil {
			t.Errorf("%s has no licence file", fields[0])
		}
	}
	if n == 0 {
		t.Fatal("nothing vendored")
	}
}
