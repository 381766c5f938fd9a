package api

import (
	"context"
	"net/http"
	"strings"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
)

// listCountries is public and, by the spec, a bare JSON array without the envelope.
func (s *Server) listCountries(w http.ResponseWriter, r *http.Request) error {
	countries, err := s.store.ListCountries(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, countries)
	return nil
}

func (s *Server) getCountry(w http.ResponseWriter, r *http.Request) error {
	c, err := pathObject(r, "Country", s.store.CountryByID)
	return reply(w, http.StatusOK, c, err)
}

func (s *Server) listNetworks(w http.ResponseWriter, r *http.Request) error {
	return writePage(s, w, r, func(p store.PageRequest) ([]networkJSON, int, error) {
		items, count, err := s.store.ListNetworks(r.Context(), p)
		if err != nil {
			return nil, 0, err
		}
		out, err := s.withAvailability(r.Context(), items)
		return out, count, err
	})
}

func (s *Server) getNetwork(w http.ResponseWriter, r *http.Request) error {
	n, err := pathObject(r, "Network", s.store.NetworkByID)
	if err != nil {
		return err
	}
	out, err := s.networkAvailability(r.Context(), n)
	return reply(w, http.StatusOK, out, err)
}

// networkPredictionJSON is the answer of GET /networks/predict/.
type networkPredictionJSON struct {
	Phone        string                    `json:"phone"`
	Country      string                    `json:"country"`
	Network      *string                   `json:"network"`
	NetworkName  *string                   `json:"network_name"`
	Carrier      *string                   `json:"carrier"`
	Confidence   sika.PredictionConfidence `json:"confidence"`
	MayBePorted  bool                      `json:"may_be_ported"`
	Alternatives []string                  `json:"alternatives"`
	Uncertainty  []string                  `json:"uncertainty"`
}

// predictNetwork answers GET /networks/predict/ (predict).
func (s *Server) predictNetwork(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	p, err := s.predict(r.Context(), q.Get("phone"), q.Get("country"))
	return reply(w, http.StatusOK, p, err)
}

// predict tells the country and network of a phone number from the numbering plans
// (sika.PredictNetwork), checked against the catalogue: a number of a country Sika does not
// serve is refused on `phone`; an operator the catalogue lacks is an unknown carrier. country,
// optional, is a catalogue country to read a national number in.
func (s *Server) predict(ctx context.Context, phone, country string) (networkPredictionJSON, error) {
	phone, country = strings.TrimSpace(phone), strings.TrimSpace(country)
	var verr sika.Validation
	if phone == "" {
		verr.Add("phone", "This field is required.")
	}
	if country != "" {
		if _, err := s.store.CountryByISO(ctx, country); sika.ErrorCode(err) == sika.CodeNotFound {
			verr.Add("country", "Unknown country code.")
		} else if err != nil {
			return networkPredictionJSON{}, err
		}
	}
	if err := verr.Err(); err != nil {
		return networkPredictionJSON{}, err
	}
	p, err := sika.PredictNetwork(phone, country)
	if err != nil {
		return networkPredictionJSON{}, err
	}
	networks, err := s.store.CountryNetworks(ctx, p.Country)
	if err != nil {
		return networkPredictionJSON{}, err
	}
	if len(networks) == 0 {
		return networkPredictionJSON{}, sika.FieldError("phone", "This number is of a country Sika does not serve.")
	}
	codes, names := make([]string, len(networks)), map[string]string{}
	for i, n := range networks {
		codes[i], names[n.Code] = n.Code, n.Name
	}
	p = p.InCatalogue(codes)
	out := networkPredictionJSON{Phone: p.Phone, Country: p.Country, Confidence: p.Confidence, MayBePorted: p.MayBePorted,
		Alternatives: p.Alternatives, Uncertainty: p.Uncertainty}
	if p.Network != "" {
		name := names[p.Network]
		out.Network, out.NetworkName = &p.Network, &name
	}
	if p.Carrier != "" {
		out.Carrier = &p.Carrier
	}
	return out, nil
}

// exchangeRateJSON renders a rate as a decimal string.
type exchangeRateJSON struct {
	sika.ExchangeRate
	Rate string `json:"rate"`
}

func (s *Server) listExchangeRates(w http.ResponseWriter, r *http.Request) error {
	return writePage(s, w, r, func(p store.PageRequest) ([]exchangeRateJSON, int, error) {
		items, count, err := s.store.ListExchangeRates(r.Context(), p)
		if err != nil {
			return nil, 0, err
		}
		out := make([]exchangeRateJSON, len(items))
		for i, x := range items {
			out[i] = exchangeRateJSON{ExchangeRate: x, Rate: x.Rate.String()}
		}
		return out, count, nil
	})
}

// feeRuleJSON is a price as merchants see it: the fee they are charged, never the operator's
// cost inside it.
type feeRuleJSON struct {
	Percentage string  `json:"percentage"`
	Fixed      string  `json:"fixed"`
	MinFee     *string `json:"min_fee"`
	MaxFee     *string `json:"max_fee"`
}

// networkRateJSON is one line of GET /pricing/my-rates/.
type networkRateJSON struct {
	Network         uuid.UUID    `json:"network"`
	NetworkCode     string       `json:"network_code"`
	NetworkName     string       `json:"network_name"`
	Country         string       `json:"country"`
	Currency        string       `json:"currency"`
	IsActive        bool         `json:"is_active"`
	Collection      *feeRuleJSON `json:"collection"`
	Payout          *feeRuleJSON `json:"payout"`
	OTPRequired     bool         `json:"otp_required"`
	OTPInstructions string       `json:"otp_instructions"`
	OTPKind         sika.OTPKind `json:"otp_kind"`
	Custom          bool         `json:"custom"`
}

func feeRule(p *sika.Pricing) *feeRuleJSON {
	if p == nil {
		return nil
	}
	out := &feeRuleJSON{Percentage: percentString(p.Fee.Percentage), Fixed: sika.FormatAmount(p.Fee.Fixed)}
	if p.Fee.MinFee != nil {
		v := sika.FormatAmount(*p.Fee.MinFee)
		out.MinFee = &v
	}
	if p.Fee.MaxFee != nil {
		v := sika.FormatAmount(*p.Fee.MaxFee)
		out.MaxFee = &v
	}
	return out
}

// myRates lists the caller's effective price per network, with whether the network needs a
// pre-payment OTP (sent in `otp` of the softpay request) and how the customer obtains it.
func (s *Server) myRates(w http.ResponseWriter, r *http.Request) error {
	merchant, env := tenant(r.Context())
	rates, err := s.store.EffectiveRates(r.Context(), merchant, env)
	if err != nil {
		return err
	}
	out := make([]networkRateJSON, len(rates))
	for i, x := range rates {
		out[i] = networkRateJSON{
			Network: x.Network.ID, NetworkCode: x.Network.Code, NetworkName: x.Network.Name,
			Country: x.Country.ISOCode, Currency: x.Country.DefaultCurrency, IsActive: x.Network.IsActive,
			Collection: feeRule(x.Inbound), Payout: feeRule(x.Outbound),
			OTPRequired: x.Network.OTPKind == sika.OTPPrePayment, OTPInstructions: x.Network.OTPInstructions,
			OTPKind: x.Network.OTPKind,
			Custom:  (x.Inbound != nil && x.Inbound.Custom) || (x.Outbound != nil && x.Outbound.Custom),
		}
	}
	writeData(w, http.StatusOK, out)
	return nil
}

// percentString shows a percentage with two decimals, or four when it has them.
func percentString(d decimal.Decimal) string {
	if d.Equal(d.Round(2)) {
		return d.StringFixed(2)
	}
	return d.StringFixed(4)
}
