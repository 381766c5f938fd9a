package sika

import (
	"time"

	"github.com/google/uuid"
)

// KYCStatus is where a merchant stands in identity verification.
type KYCStatus string

// KYC statuses of a merchant.
const (
	KYCPending  KYCStatus = "PENDING"
	KYCVerified KYCStatus = "VERIFIED"
	KYCRejected KYCStatus = "REJECTED"
)

// Member is a person who logs in to the dashboard. Staff members (a StaffRole) may use the
// support console and the admin routes their role allows.
type Member struct {
	ID       uuid.UUID `json:"id"`
	Email    string    `json:"email"`
	FullName string    `json:"full_name"`
	// IsStaff is StaffRole != "" (the API shows it; the role itself is the console's business).
	IsStaff   bool      `json:"is_staff"`
	StaffRole StaffRole `json:"-"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Merchant is a business account that collects and pays out money. A new merchant works in
// TEST at once; LIVE needs is_active, which KYC approval sets.
type Merchant struct {
	ID          uuid.UUID `json:"id"`
	Name        string    `json:"name"`
	Country     string    `json:"country"`
	KYCStatus   KYCStatus `json:"kyc_status"`
	IsActive    bool      `json:"is_active"`
	IsSuspended bool      `json:"is_suspended"`
	// RateLimitPerMinute overrides the service-wide request rate when set.
	RateLimitPerMinute *int      `json:"-"`
	CreatedAt          time.Time `json:"created_at"`
	UpdatedAt          time.Time `json:"updated_at"`
}

// MembershipRole is what a member may do for a merchant.
type MembershipRole string

// Membership roles.
const (
	RoleOwner     MembershipRole = "OWNER"
	RoleAdmin     MembershipRole = "ADMIN"
	RoleDeveloper MembershipRole = "DEVELOPER"
	RoleViewer    MembershipRole = "VIEWER"
)

// MerchantMembership is a merchant as seen by one of its members.
type MerchantMembership struct {
	Merchant
	Role MembershipRole `json:"role"`
}

// APIKey is a merchant's secret key. Only its SHA-256 hash and a display prefix are stored;
// the secret itself is shown once, at creation.
type APIKey struct {
	ID              uuid.UUID   `json:"id"`
	Merchant        uuid.UUID   `json:"merchant"`
	Environment     Environment `json:"environment"`
	Scope           Scope       `json:"scope"`
	Name            string      `json:"name"`
	Prefix          string      `json:"prefix"`
	LastUsedAt      *time.Time  `json:"last_used_at"`
	RevokedAt       *time.Time  `json:"revoked_at"`
	CreatedByMember *uuid.UUID  `json:"created_by_member"`
	CreatedAt       time.Time   `json:"created_at"`
	// Secret is set only in the creation response.
	Secret string `json:"key,omitempty"`
}

// IPWhitelistEntry allows payout initiation by API key from an address or a CIDR range.
type IPWhitelistEntry struct {
	ID          uuid.UUID   `json:"id"`
	Merchant    uuid.UUID   `json:"merchant"`
	Environment Environment `json:"environment"`
	IPAddress   string      `json:"ip_address"`
	Description string      `json:"description"`
	CreatedAt   time.Time   `json:"created_at"`
}

// FeeChargeMode says who bears the fees of a payment.
type FeeChargeMode string

// Fee charge modes. ADD_ON adds the fees to what the customer pays; DEDUCTED takes them out of
// what the merchant receives.
const (
	FeeAddOn    FeeChargeMode = "ADD_ON"
	FeeDeducted FeeChargeMode = "DEDUCTED"
)

// Valid reports whether m is a known mode.
func (m FeeChargeMode) Valid() bool { return m == FeeAddOn || m == FeeDeducted }

// MerchantSettings are a merchant's defaults in one environment.
type MerchantSettings struct {
	Merchant            uuid.UUID     `json:"merchant"`
	Environment         Environment   `json:"environment"`
	FeeChargeMode       FeeChargeMode `json:"fee_charge_mode"`
	AllowClientOverride bool          `json:"allow_client_override"`
	// PayoutApprovalThreshold, when set, makes a payout batch whose total (per currency, fees
	// included) is over it wait for a second member's approval, for ApprovalWindowHours.
	PayoutApprovalThreshold *Amount   `json:"payout_approval_threshold"`
	ApprovalWindowHours     int       `json:"approval_window_hours"`
	UpdatedAt               time.Time `json:"updated_at"`
}

// EffectiveFeeChargeMode applies the client-override guard: the request's mode counts only
// when the merchant allows it; otherwise the merchant's default applies silently.
func (s MerchantSettings) EffectiveFeeChargeMode(requested FeeChargeMode) FeeChargeMode {
	if s.AllowClientOverride && requested.Valid() {
		return requested
	}
	return s.FeeChargeMode
}
