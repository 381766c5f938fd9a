package api

import (
	"net/http"
	"strings"

	"github.com/google/uuid"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/activities"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/workflows"
)

type payoutMethodRequest struct {
	Type              sika.PayoutMethodType `json:"type"`
	Label             string                `json:"label"`
	Network           string                `json:"network"`
	PhoneNumber       string                `json:"phone_number"`
	BankName          string                `json:"bank_name"`
	AccountHolderName string                `json:"account_holder_name"`
	AccountNumber     string                `json:"account_number"`
	IBAN              string                `json:"iban"`
	SwiftBIC          string                `json:"swift_bic"`
	BankCode          string                `json:"bank_code"`
	BranchCode        string                `json:"branch_code"`
}

func optional(s string) *string {
	if s = strings.TrimSpace(s); s == "" {
		return nil
	}
	return &s
}

// createPayoutMethod records an account of the merchant's own (dashboard only); it receives
// settlements once an admin has verified it.
func (s *Server) createPayoutMethod(w http.ResponseWriter, r *http.Request, req payoutMethodRequest) error {
	ctx := r.Context()
	merchant, env := tenant(ctx)
	m := sika.PayoutMethod{Merchant: merchant, Environment: env, Type: sika.PayoutMethodType(strings.ToUpper(string(req.Type))),
		Label: strings.TrimSpace(req.Label)}
	var v sika.Validation
	switch m.Type {
	case sika.PayoutMobileMoney:
		var network sika.Network
		var err error
		if id, perr := uuid.Parse(req.Network); perr == nil {
			network, err = s.store.NetworkByID(ctx, id)
		} else if req.Network != "" {
			network, err = s.store.NetworkByCode(ctx, req.Network)
		}
		switch {
		case req.Network == "":
			v.Add("network", sika.MsgRequired)
		case sika.ErrorCode(err) == sika.CodeNotFound:
			v.Add("network", "Unknown network.")
		case err != nil:
			return err
		default:
			m.Network = &network.ID
			country, err := s.store.CountryByID(ctx, network.Country)
			if err != nil {
				return err
			}
			phone, perr := sika.NormalizePhone(country, req.PhoneNumber)
			if req.PhoneNumber == "" {
				v.Add("phone_number", sika.MsgRequired)
			} else if perr != nil {
				v.Add("phone_number", perr.Error())
			}
			m.PhoneNumber = &phone
		}
	case sika.PayoutBank:
		m.BankName, m.AccountHolderName, m.AccountNumber = optional(req.BankName), optional(req.AccountHolderName), optional(req.AccountNumber)
		m.IBAN, m.SwiftBIC, m.BankCode, m.BranchCode = optional(req.IBAN), optional(req.SwiftBIC), optional(req.BankCode), optional(req.BranchCode)
		if m.AccountHolderName == nil {
			v.Add("account_holder_name", sika.MsgRequired)
		}
		if m.AccountNumber == nil && m.IBAN == nil {
			v.Add("account_number", "An account number or an IBAN is required.")
		}
	case "":
		v.Add("type", sika.MsgRequired)
	default:
		v.Add("type", `Must be "MOBILE_MONEY" or "BANK".`)
	}
	maxLength(&v, "label", m.Label, 100)
	if err := v.Err(); err != nil {
		return err
	}
	created, err := s.store.CreatePayoutMethod(ctx, m)
	return reply(w, http.StatusCreated, created, err)
}

func (s *Server) listPayoutMethods(w http.ResponseWriter, r *http.Request) error {
	return tenantList(s, w, r, s.store.ListPayoutMethods)
}

func (s *Server) getPayoutMethod(w http.ResponseWriter, r *http.Request) error {
	return writeTenantObject(w, r, "Payout method", s.store.PayoutMethodByID)
}

type reviewPayoutMethodRequest struct {
	IsVerified *bool `json:"is_verified"`
	IsActive   *bool `json:"is_active"`
}

// reviewPayoutMethod lets staff verify (or suspend) a merchant's payout method.
func (s *Server) reviewPayoutMethod(w http.ResponseWriter, r *http.Request, req reviewPayoutMethodRequest) error {
	id, err := pathUUID(r, "id", "Payout method")
	if err != nil {
		return err
	}
	m, err := s.store.ReviewPayoutMethod(r.Context(), id, principalFrom(r.Context()).Member.ID, req.IsVerified, req.IsActive)
	return reply(w, http.StatusOK, m, err)
}

type settlementRequest struct {
	Amount       string `json:"amount"`
	Currency     string `json:"currency"`
	Country      string `json:"country"`
	PayoutMethod string `json:"payout_method"`
}

// createSettlement moves available balance to one of the merchant's verified payout methods:
// a RETRAIT transaction whose amount is held at once and then paid out by the payout workflow.
// Settlements carry no fee.
func (s *Server) createSettlement(w http.ResponseWriter, r *http.Request, req settlementRequest) error {
	ctx := r.Context()
	merchant, env := tenant(ctx)
	var v sika.Validation
	req.Currency = strings.ToUpper(strings.TrimSpace(req.Currency))
	amount, aerr := parseAmount(req.Amount, req.Currency)
	if aerr != nil {
		v.Add("amount", aerr.Error())
	}
	methodID, perr := uuid.Parse(req.PayoutMethod)
	if perr != nil {
		v.Add("payout_method", sika.MsgInvalidUUID)
	}
	if req.Country == "" {
		v.Add("country", sika.MsgRequired)
	}
	if err := v.Err(); err != nil {
		return err
	}
	method, err := s.store.PayoutMethodByID(ctx, merchant, env, methodID)
	if sika.ErrorCode(err) == sika.CodeNotFound {
		return sika.FieldError("payout_method", "Unknown payout method.")
	}
	if err != nil {
		return err
	}
	if !method.IsVerified || !method.IsActive {
		return sika.Errorf(sika.CodePayoutMethodUnverified, "The payout method must be verified by Sika and active before money is sent to it.")
	}
	if method.Type != sika.PayoutMobileMoney {
		return sika.Errorf(sika.CodeNetworkUnavailable, "Bank settlements are not available yet; use a mobile-money payout method.")
	}
	network, err := s.store.NetworkByID(ctx, *method.Network)
	if err != nil {
		return err
	}
	country, err := s.store.CountryByID(ctx, network.Country)
	if err != nil {
		return err
	}
	if !strings.EqualFold(req.Country, country.ISOCode) || req.Currency != country.DefaultCurrency {
		return sika.Errorf(sika.CodeCurrencyCountry, "This payout method is paid from the %s wallet, in %s.", country.ISOCode, country.DefaultCurrency)
	}
	if _, err := s.checkNetworkOpen(ctx, network, env, sika.DirectionOutbound); err != nil {
		return err
	}
	id, ref, err := s.newMoneyRecord("SET")
	if err != nil {
		return err
	}
	settlementID, err := uuid.NewV7()
	if err != nil {
		return err
	}
	t := sika.Transaction{ID: id, Reference: ref, Merchant: merchant, Environment: env, Type: sika.TypePayout,
		Currency: country.DefaultCurrency, Country: country.ISOCode, NetworkID: network.ID, Network: network.Code,
		Recipient: *method.PhoneNumber, CustomerName: method.Label, Description: "Settlement"}
	setNoFee(&t, amount)
	st, created, err := s.store.CreateSettlement(ctx, transactionOrder(r, t, "Settlement requested"), settlementID, method.ID,
		workflows.PayoutStart(activities.PaymentInput{TransactionID: t.ID, Run: 1}))
	if err != nil {
		return err
	}
	if created {
		if err := workflows.StartPayout(ctx, s.cfg.Temporal, activities.PaymentInput{TransactionID: st.Transaction, Run: 1}); err != nil {
			logFrom(ctx).Warn("settlement workflow not started; the outbox sweeper will", "settlement", st.ID, "err", err)
		}
	}
	writeData(w, http.StatusCreated, st)
	return nil
}

func (s *Server) listSettlements(w http.ResponseWriter, r *http.Request) error {
	return tenantList(s, w, r, s.store.ListSettlements)
}

type walletTransferRequest struct {
	Amount      string `json:"amount"`
	FromCountry string `json:"from_country"`
	ToCountry   string `json:"to_country"`
}

// createWalletTransfer moves money between two of the merchant's wallets at the current rate,
// at once and atomically; the store prices the credit (rounded down, never zero).
func (s *Server) createWalletTransfer(w http.ResponseWriter, r *http.Request, req walletTransferRequest) error {
	ctx := r.Context()
	merchant, env := tenant(ctx)
	var v sika.Validation
	var from, to sika.Country
	var err error
	for _, side := range []struct {
		field, code string
		dst         *sika.Country
	}{{"from_country", req.FromCountry, &from}, {"to_country", req.ToCountry, &to}} {
		if side.code == "" {
			v.Add(side.field, sika.MsgRequired)
		} else if *side.dst, err = s.store.CountryByISO(ctx, side.code); sika.ErrorCode(err) == sika.CodeNotFound {
			v.Add(side.field, "Unknown country.")
		} else if err != nil {
			return err
		}
	}
	if from.ID != uuid.Nil && from.ID == to.ID {
		v.Add("to_country", "Must differ from from_country.")
	}
	amount, aerr := parseAmount(req.Amount, from.DefaultCurrency)
	if aerr != nil {
		v.Add("amount", aerr.Error())
	}
	if err := v.Err(); err != nil {
		return err
	}
	id, ref, err := s.newMoneyRecord("TRF")
	if err != nil {
		return err
	}
	transferID, err := uuid.NewV7()
	if err != nil {
		return err
	}
	t := sika.Transaction{ID: id, Reference: ref, Merchant: merchant, Environment: env, Type: sika.TypeTransfer,
		Currency: from.DefaultCurrency, Country: from.ISOCode, Recipient: to.ISOCode, Description: "Transfer to the " + to.ISOCode + " wallet"}
	setNoFee(&t, amount)
	wt, _, err := s.store.CreateWalletTransfer(ctx, store.NewWalletTransfer{
		Transaction: transactionOrder(r, t, "Wallet transfer requested"),
		ID:          transferID, ToCountry: to.ISOCode, ToCurrency: to.DefaultCurrency,
	})
	if err != nil {
		return err
	}
	writeData(w, http.StatusCreated, wt)
	return nil
}

func (s *Server) listWalletTransfers(w http.ResponseWriter, r *http.Request) error {
	return tenantList(s, w, r, s.store.ListWalletTransfers)
}
