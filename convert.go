package sika

import "github.com/shopspring/decimal"

// ConvertAmount converts amount into toCurrency at rate (units of toCurrency per unit of the
// amount's currency, as ExchangeRate.Rate) and rounds the product HALF-UP to toCurrency's minor
// unit. decimal's Round rounds half away from zero, which for the positive amounts the service
// handles is half-up (a negative amount would round -0.5 to -1).
//
// Unlike a fee, a converted amount is rounded to the nearest unit rather than up: conversion
// favours neither side.
func ConvertAmount(amount, rate decimal.Decimal, toCurrency string) decimal.Decimal {
	return amount.Mul(rate).Round(MinorUnits(toCurrency))
}
