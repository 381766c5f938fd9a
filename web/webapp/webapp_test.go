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

// TestReasons: the status log's reasons the service writes are said in the page's language;
// another is kept as written, marked English on a French page unless a person wrote it.
func TestReasons(t *testing.T) {
	fr := &Visit{Lang: "fr", cat: Merge()}
	for reason, want := range map[string]Said{
		"Payment requested":             {Text: "Paiement demandé"},
		"Refund of PAY-1 requested":     {Text: "Remboursement de PAY-1 demandé"},
		"Refused by sandbox-a: expired": {Text: "Refusé par sandbox-a\u00a0: expired"},
		"Confirmed by mtn-bj callback":  {Text: "Confirmé par la notification de mtn-bj"},
		"Insufficient funds":            {Text: "Insufficient funds", Lang: "en", Marked: true},
	} {
		if got := fr.Reason(reason, "SYSTEM"); *got != want {
			t.Errorf("%q: got %+v, want %+v", reason, *got, want)
		}
	}
	if got := fr.Reason("Virement reçu", "ADMIN"); got.Lang != "" || !got.Marked {
		t.Errorf("support's own words are not marked as of a language unknown: %+v", got)
	}
	if fr.Reason("", "SYSTEM") != nil {
		t.Error("no reason, nothing said")
	}
}
