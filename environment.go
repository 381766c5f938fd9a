package sika

// Environment separates test money from real money. Every merchant-owned row carries one; a
// TEST key sees and creates only TEST rows and is routed to the sandbox gateway.
type Environment string

// Environments.
const (
	EnvironmentTest Environment = "TEST"
	EnvironmentLive Environment = "LIVE"
)

// Valid reports whether e is a known environment.
func (e Environment) Valid() bool { return e == EnvironmentTest || e == EnvironmentLive }

// Scope is what an API key may do.
type Scope string

// API key scopes.
const (
	ScopePayin  Scope = "PAYIN"
	ScopePayout Scope = "PAYOUT"
	ScopeBoth   Scope = "BOTH"
)

// Valid reports whether s is a known scope.
func (s Scope) Valid() bool { return s == ScopePayin || s == ScopePayout || s == ScopeBoth }

// Allows reports whether a key of scope s may call a route that needs scope need.
// BOTH allows everything; PAYIN and PAYOUT allow only themselves.
func (s Scope) Allows(need Scope) bool {
	return s == ScopeBoth || s == need
}

// Direction is the way money flows through a network, used by pricing.
type Direction string

// Directions of money flow.
const (
	DirectionInbound  Direction = "INBOUND"
	DirectionOutbound Direction = "OUTBOUND"
)

// Valid reports whether d is a known direction.
func (d Direction) Valid() bool { return d == DirectionInbound || d == DirectionOutbound }
