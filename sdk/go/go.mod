module github.com/sikahq/sika/sdk/go

go 1.24.0

require (
	github.com/google/uuid v1.6.0
	github.com/oapi-codegen/runtime v1.8.0
	github.com/shopspring/decimal v1.4.0
	github.com/standard-webhooks/standard-webhooks/libraries v0.0.1
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/apapsch/go-jsonmerge/v2 v2.0.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)
