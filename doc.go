// Package sika holds the domain language of the Sika payment service: merchants, API keys,
// the reference catalogue, money and its rules, and the one Error type with its stable codes.
//
// It does no I/O. Every other package of the module imports it; it imports none of them.
package sika
