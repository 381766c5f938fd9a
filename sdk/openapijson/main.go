// Command openapijson prints the OpenAPI document of the merchant API as the service serves it
// (api/openapi.yaml converted to JSON, anchors and merge keys resolved), with its server URLs
// relative (`/api/v1`, `/`) as written. The SDK generators read it, so that they need neither a
// running server nor a YAML parser of their own:
//
//	go run ./sdk/openapijson > openapi.json
package main

import (
	"fmt"
	"os"

	"github.com/sikahq/sika/api"
)

func main() {
	doc, err := api.OpenAPIJSON()
	if err != nil {
		fmt.Fprintln(os.Stderr, "openapijson:", err)
		os.Exit(1)
	}
	if _, err := os.Stdout.Write(doc); err != nil {
		fmt.Fprintln(os.Stderr, "openapijson:", err)
		os.Exit(1)
	}
}
