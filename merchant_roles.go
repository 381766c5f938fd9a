package sika

// MerchantPermission is one thing a merchant's member may do in the dashboard; each membership
// role allows a set of them (MembershipRole.Can). API keys are governed by their scope, not by
// roles: a key is created by a member allowed to manage keys.
type MerchantPermission string

// The merchant permissions.
const (
	// PermManageKeys: API keys, the IP whitelist and webhook endpoints.
	PermManageKeys MerchantPermission = "manage_keys"
	// PermChangeSettings: the merchant's settings (fees, the approval threshold), its team and
	// its payout methods.
	PermChangeSettings MerchantPermission = "change_settings"
	// PermSendPayouts: payouts, payout batches (and their cancel), refunds, settlements and
	// wallet transfers.
	PermSendPayouts MerchantPermission = "send_payouts"
	// PermApprovePayouts: approve or reject another member's payout batch that waits for a
	// second approval.
	PermApprovePayouts MerchantPermission = "approve_payouts"
)

// rolePermissions is the table of what each membership role may do; reading is open to all.
var rolePermissions = map[MembershipRole][]MerchantPermission{
	RoleOwner:     {PermManageKeys, PermChangeSettings, PermSendPayouts, PermApprovePayouts},
	RoleAdmin:     {PermManageKeys, PermChangeSettings, PermSendPayouts, PermApprovePayouts},
	RoleDeveloper: {PermManageKeys},
	RoleViewer:    {},
}

// Valid reports whether r is a known membership role.
func (r MembershipRole) Valid() bool {
	_, ok := rolePermissions[r]
	return ok
}

// Can reports whether a member of role r may do p.
func (r MembershipRole) Can(p MerchantPermission) bool {
	for _, q := range rolePermissions[r] {
		if q == p {
			return true
		}
	}
	return false
}

// ErrMerchantRole is the error of a member whose role does not allow an operation
// (role_forbidden, 403).
func ErrMerchantRole(r MembershipRole, p MerchantPermission) error {
	return Errorf(CodeRoleForbidden, "Your role in this merchant (%s) does not allow this operation (%s).", r, p)
}
