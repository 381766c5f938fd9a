package sika

import (
	"slices"
	"strings"

	"github.com/nyaruka/phonenumbers"
)

// PredictionConfidence says how far a network predicted from a phone number can be trusted.
type PredictionConfidence string

// Confidences, from the surest.
const (
	// ConfidenceHigh: the numbering plans give the number's prefix to one operator of the
	// catalogue, the number is a valid mobile number of its country, numbers are not ported
	// there and no other network pays on any number.
	ConfidenceHigh PredictionConfidence = "HIGH"
	// ConfidenceMedium: the prefix is one operator's, but the number may have been ported to
	// another, or another network of the country (Wave) pays on numbers of every operator.
	ConfidenceMedium PredictionConfidence = "MEDIUM"
	// ConfidenceLow: the prefix is one operator's, but the number is not a valid mobile number
	// of today's plan (a number of an older plan, a sandbox number): a guess from its digits.
	ConfidenceLow PredictionConfidence = "LOW"
	// ConfidenceNone: no network of the catalogue is known for the number.
	ConfidenceNone PredictionConfidence = "NONE"
)

// Why a prediction is not sure (NetworkPrediction.Uncertainty).
const (
	// UncertainPorted: the country has mobile number portability; the number may have left
	// the operator its prefix was given to.
	UncertainPorted = "ported_numbers"
	// UncertainSharedPrefix: another network of the country pays on numbers of every operator
	// (Wave): the customer may hold an account there too (Alternatives).
	UncertainSharedPrefix = "shared_prefix"
	// UncertainOutsidePlan: the number is not a valid mobile number of its country's plan today.
	UncertainOutsidePlan = "outside_numbering_plan"
	// UncertainUnknownCarrier: the plans name no operator for the prefix, or one the catalogue
	// has no network for.
	UncertainUnknownCarrier = "unknown_carrier"
)

// NetworkPrediction is the network a phone number most likely belongs to.
type NetworkPrediction struct {
	// Country is the ISO 3166 code of the number's country, Phone the number in E.164.
	Country string
	Phone   string
	// Network is the catalogue code of the predicted network (MTN_BJ), "" when none is known.
	Network string
	// Carrier is the operator the numbering plans give the prefix to ("" when they name none).
	Carrier    string
	Confidence PredictionConfidence
	// MayBePorted: the country has mobile number portability.
	MayBePorted bool
	// Alternatives are the other networks of the country the number may pay with.
	Alternatives []string
	// Uncertainty lists why the prediction is not sure (Uncertain*), empty when it is.
	Uncertainty []string
}

// carrierBrands maps words of the numbering plans' operator names (lower case) to the operator
// part of the catalogue's network codes (OPERATOR_CC), for the operators of the catalogue
// and the former names the plans may still use for them.
var carrierBrands = []struct{ word, operator string }{
	{"mtn", "MTN"}, {"areeba", "MTN"},
	{"moov", "MOOV"}, {"libertis", "MOOV"}, {"onatel", "MOOV"}, {"telmob", "MOOV"}, {"sotelma", "MOOV"}, {"malitel", "MOOV"},
	{"orange", "ORANGE"},
	{"airtel", "AIRTEL"}, {"celtel", "AIRTEL"}, {"zain", "AIRTEL"},
	{"vodacom", "VODACOM"},
	{"free", "FREE"}, {"tigo", "FREE"},
	{"expresso", "EXPRESSO"},
	{"togo telecom", "TMONEY"}, {"togocel", "TMONEY"},
	{"celtiis", "CELTIIS"},
}

// renumberings are the prefixes countries put before every mobile number when they renumbered,
// to read a number still written in the old plan: Benin put "01" before its 8-digit numbers
// (30 November 2024), so 97000123 is 0197000123.
var renumberings = map[string]struct {
	prefix    string
	oldLength int
}{"BJ": {"01", 8}}

// anyNumberOperators are operators whose wallets are opened on a number of any operator of
// the country, so no prefix is theirs (Wave in Senegal and Côte d'Ivoire).
var anyNumberOperators = []string{"WAVE"}

// PredictNetwork tells the country and network of a phone number from the numbering plans of
// libphonenumber (github.com/nyaruka/phonenumbers: its carrier prefixes), as a catalogue
// network code (OPERATOR_CC). country (ISO 3166 alpha-2) reads a number written without its
// calling code; without it the number must start with "+" or "00" and its calling code. The
// caller checks that the network is in its catalogue (and drops alternatives that are not).
//
// An invalid number is a validation error on "phone"; an unknown country one on "country".
func PredictNetwork(phone, country string) (NetworkPrediction, error) {
	country = strings.ToUpper(strings.TrimSpace(country))
	if country != "" && phonenumbers.GetCountryCodeForRegion(country) == 0 {
		return NetworkPrediction{}, FieldError("country", "Unknown country code.")
	}
	num, ok := parsePhone(phone, country)
	if !ok {
		return NetworkPrediction{}, FieldError("phone", "Enter a valid phone number, with its country code or a country.")
	}
	region := phonenumbers.GetRegionCodeForNumber(num)
	if region == "" || region == phonenumbers.UNKNOWN_REGION {
		// A calling code shared by several countries whose plans do not tell which: the one
		// asked, if the code is its.
		region = country
		if phonenumbers.GetCountryCodeForRegion(region) != int(num.GetCountryCode()) {
			return NetworkPrediction{}, FieldError("phone", "This number belongs to no country the numbering plans know.")
		}
	}
	p := NetworkPrediction{Country: region, Phone: phonenumbers.Format(num, phonenumbers.E164),
		MayBePorted: phonenumbers.IsMobileNumberPortableRegion(region), Uncertainty: []string{}}
	valid := phonenumbers.IsValidNumberForRegion(num, region)
	p.Carrier, _ = phonenumbers.GetCarrierForNumber(renumbered(num, region, valid), "en")
	if operator := carrierOperator(p.Carrier); operator != "" {
		p.Network = operator + "_" + region
	}
	if p.MayBePorted {
		p.Uncertainty = append(p.Uncertainty, UncertainPorted)
	}
	if !valid {
		p.Uncertainty = append(p.Uncertainty, UncertainOutsidePlan)
	}
	return p.settle(), nil
}

// renumbered is num in its country's current plan when it is a valid number of the plan before
// the country renumbered (renumberings), num otherwise.
func renumbered(num *phonenumbers.PhoneNumber, region string, valid bool) *phonenumbers.PhoneNumber {
	r, ok := renumberings[region]
	national := phonenumbers.GetNationalSignificantNumber(num)
	if valid || !ok || len(national) != r.oldLength {
		return num
	}
	now, err := phonenumbers.Parse(r.prefix+national, region)
	if err != nil || !phonenumbers.IsValidNumberForRegion(now, region) {
		return num
	}
	return now
}

// InCatalogue checks a prediction against the catalogue's network codes of the number's
// country: a network the catalogue lacks is dropped (its carrier unknown to Sika), and the
// networks that pay on numbers of any operator (Wave) become alternatives. Callers that have
// the catalogue (the API, payout batches) pass its codes.
func (p NetworkPrediction) InCatalogue(codes []string) NetworkPrediction {
	p.Uncertainty = slices.DeleteFunc(slices.Clone(p.Uncertainty), func(u string) bool {
		return u == UncertainUnknownCarrier || u == UncertainSharedPrefix
	})
	if p.Network != "" && !slices.Contains(codes, p.Network) {
		p.Network = ""
	}
	p.Alternatives = []string{}
	for _, op := range anyNumberOperators {
		if code := op + "_" + p.Country; code != p.Network && slices.Contains(codes, code) {
			p.Alternatives = append(p.Alternatives, code)
		}
	}
	return p.settle()
}

// settle notes the uncertainties of the network and its alternatives and sets the confidence.
func (p NetworkPrediction) settle() NetworkPrediction {
	if p.Alternatives == nil {
		p.Alternatives = []string{}
	}
	if p.Network == "" {
		p.Uncertainty = append(p.Uncertainty, UncertainUnknownCarrier)
	} else if len(p.Alternatives) > 0 {
		p.Uncertainty = append(p.Uncertainty, UncertainSharedPrefix)
	}
	switch {
	case p.Network == "":
		p.Confidence = ConfidenceNone
	case slices.Contains(p.Uncertainty, UncertainOutsidePlan):
		p.Confidence = ConfidenceLow
	case len(p.Uncertainty) > 0:
		p.Confidence = ConfidenceMedium
	default:
		p.Confidence = ConfidenceHigh
	}
	return p
}

// carrierOperator is the catalogue operator of a numbering-plan operator name, or "".
func carrierOperator(carrier string) string {
	name := strings.ToLower(carrier)
	for _, b := range carrierBrands {
		if strings.Contains(name, b.word) {
			return b.operator
		}
	}
	return ""
}
