package webapp_test

import (
	"testing"

	"github.com/sikahq/sika/web/webapp"
	"github.com/sikahq/sika/web/webapp/webapptest"
)

// TestKitTemplatesNothingFromAnotherOrigin: the kit's layout, partials and pages load nothing
// from another origin and have no inline code (the CSP would block it).
func TestKitTemplatesNothingFromAnotherOrigin(t *testing.T) {
	webapptest.NothingFromAnotherOrigin(t, webapp.SharedTemplates())
}
