package api

import (
	"context"
	"errors"
	"net/http"
	"net/mail"
	"strconv"
	"strings"
	"time"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
)

type registerRequest struct {
	Email        string `json:"email"`
	Password     string `json:"password"`
	FullName     string `json:"full_name"`
	BusinessName string `json:"business_name"`
	Country      string `json:"country"`
}

// sessionResponse is what login and registration answer.
type sessionResponse struct {
	AccessToken string                    `json:"access_token"`
	TokenType   string                    `json:"token_type"`
	ExpiresAt   time.Time                 `json:"expires_at"`
	Member      sika.Member               `json:"member"`
	Merchants   []sika.MerchantMembership `json:"merchants"`
}

// validEmail accepts a plain address (no display name).
func validEmail(s string) bool {
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s && len(s) <= 254
}

// requireText records an error when a required text field is blank or too long.
func requireText(v *sika.Validation, field, value string, maxLen int) {
	if strings.TrimSpace(value) == "" {
		v.Add(field, sika.MsgRequired)
		return
	}
	maxLength(v, field, value, maxLen)
}

// maxLength records an error when a text field is longer than maxLen characters.
func maxLength(v *sika.Validation, field, value string, maxLen int) {
	if len([]rune(value)) > maxLen {
		v.Add(field, msgTooLong(maxLen))
	}
}

// msgTooLong is the message of a text longer than maxLen characters.
func msgTooLong(maxLen int) string {
	return "Ensure this field has no more than " + strconv.Itoa(maxLen) + " characters."
}

// validCountryCode checks the shape of an ISO 3166 alpha-2 code.
func validCountryCode(v *sika.Validation, field, value string) {
	if len(value) != 2 {
		v.Add(field, "Must be exactly 2 characters.")
	}
}

func (s *Server) register(w http.ResponseWriter, r *http.Request, req registerRequest) error {
	var v sika.Validation
	req.Email = strings.TrimSpace(req.Email)
	if req.Email == "" {
		v.Add("email", sika.MsgRequired)
	} else if !validEmail(req.Email) {
		v.Add("email", sika.MsgInvalidEmail)
	}
	if req.Password == "" {
		v.Add("password", sika.MsgRequired)
	} else if err := sika.CheckPasswordPolicy(req.Password); err != nil {
		v.Add("password", err.Error())
	}
	requireText(&v, "full_name", req.FullName, 200)
	requireText(&v, "business_name", req.BusinessName, 200)
	req.Country = strings.ToUpper(strings.TrimSpace(req.Country))
	validCountryCode(&v, "country", req.Country)
	if err := v.Err(); err != nil {
		return err
	}
	hash, err := sika.HashPassword(req.Password)
	if err != nil {
		return err
	}
	member, _, err := s.store.RegisterMember(r.Context(), req.Email, hash, strings.TrimSpace(req.FullName), "",
		&store.NewMerchant{Name: strings.TrimSpace(req.BusinessName), Country: req.Country})
	if err != nil {
		return err
	}
	return s.writeSession(w, r, http.StatusCreated, member)
}

type loginRequest struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

func (s *Server) login(w http.ResponseWriter, r *http.Request, req loginRequest) error {
	var v sika.Validation
	if strings.TrimSpace(req.Email) == "" {
		v.Add("email", sika.MsgRequired)
	}
	if req.Password == "" {
		v.Add("password", sika.MsgRequired)
	}
	if err := v.Err(); err != nil {
		return err
	}
	member, err := s.checkPassword(r.Context(), req.Email, req.Password)
	var locked *loginLockedError
	if errors.As(err, &locked) {
		w.Header().Set("Retry-After", strconv.Itoa(sinceSeconds(locked.wait)))
	}
	if err != nil {
		return err
	}
	return s.writeSession(w, r, http.StatusOK, member)
}

// checkPassword is the login rule of every way in (POST /auth/login/, the dashboard's and the
// console's login forms): the member of the email whose password matches, or
// invalid_credentials, after the same time whether the account exists or not. Every attempt
// counts against the account (store.BeginLogin) whatever address it comes from: past a few
// failures the account waits, longer at each failure, and an attempt while it waits is refused
// 429 rate_limited (a loginLockedError) without its password being checked, so the right
// password is no use to someone who has been guessing.
func (s *Server) checkPassword(ctx context.Context, email, password string) (sika.Member, error) {
	wait, err := s.store.BeginLogin(ctx, email, s.cfg.Now(), s.cfg.LoginPolicy)
	if err != nil {
		return sika.Member{}, err
	}
	if wait > 0 {
		logFrom(ctx).Warn("login refused: the account waits after failed logins", "retry_after_s", sinceSeconds(wait))
		return sika.Member{}, &loginLockedError{wait: wait, err: sika.Errorf(sika.CodeRateLimited,
			"Too many failed logins for this account: try again in %d seconds.", sinceSeconds(wait))}
	}
	member, hash, err := s.store.MemberByEmail(ctx, email)
	if err != nil && sika.ErrorCode(err) != sika.CodeNotFound {
		return sika.Member{}, err
	}
	if !sika.PasswordMatches(hash, password) {
		return sika.Member{}, sika.Errorf(sika.CodeInvalidCredentials, "Wrong email or password.")
	}
	if err := s.store.LoginSucceeded(ctx, email); err != nil {
		return sika.Member{}, err
	}
	return member, nil
}

// loginLockedError is a login refused while its account waits after failed logins.
type loginLockedError struct {
	wait time.Duration
	err  *sika.Error
}

func (e *loginLockedError) Error() string { return e.err.Error() }
func (e *loginLockedError) Unwrap() error { return e.err }

// RetryAfter is how long the account still waits: the login forms tell it (webapp.Host.Login).
func (e *loginLockedError) RetryAfter() time.Duration { return e.wait }

func (s *Server) writeSession(w http.ResponseWriter, r *http.Request, status int, member sika.Member) error {
	token, exp, err := s.issueToken(member)
	if err != nil {
		return err
	}
	merchants, err := s.store.MemberMerchants(r.Context(), member.ID)
	if err != nil {
		return err
	}
	writeData(w, status, sessionResponse{AccessToken: token, TokenType: "Bearer", ExpiresAt: exp, Member: member, Merchants: merchants})
	return nil
}

func (s *Server) listMemberMerchants(w http.ResponseWriter, r *http.Request) error {
	merchants, err := s.store.MemberMerchants(r.Context(), principalFrom(r.Context()).Member.ID)
	return reply(w, http.StatusOK, merchants, err)
}

type createMerchantRequest struct {
	BusinessName string `json:"business_name"`
	Country      string `json:"country"`
}

func (s *Server) createMerchant(w http.ResponseWriter, r *http.Request, req createMerchantRequest) error {
	var v sika.Validation
	requireText(&v, "business_name", req.BusinessName, 200)
	req.Country = strings.ToUpper(strings.TrimSpace(req.Country))
	validCountryCode(&v, "country", req.Country)
	if err := v.Err(); err != nil {
		return err
	}
	member := principalFrom(r.Context()).Member
	m, err := s.store.CreateMerchant(r.Context(), member.ID, store.NewMerchant{Name: strings.TrimSpace(req.BusinessName), Country: req.Country})
	if err != nil {
		return err
	}
	writeData(w, http.StatusCreated, sika.MerchantMembership{Merchant: m, Role: sika.RoleOwner})
	return nil
}
