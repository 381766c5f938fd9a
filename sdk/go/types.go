package sika

import openapi_types "github.com/oapi-codegen/runtime/types"

// Email and UUID are the types the generated code gives to `format: email` and `format: uuid`
// strings, named here so that callers need not import oapi-codegen's runtime themselves.
type (
	Email = openapi_types.Email
	UUID  = openapi_types.UUID
)
