package sika

// StaffRole is what a Sika staff member may do in the support console and the staff API
// routes. A member without one is not staff. The roles are ordered: each may do what the ones
// before it may, and more.
type StaffRole string

// The staff roles, from the least to the most trusted.
const (
	// StaffSupportReadOnly reads: the console's pages, the staff lists, the KYC documents, the
	// audit trail, the Temporal histories through the codec server.
	StaffSupportReadOnly StaffRole = "SUPPORT_READONLY"
	// StaffSupportAgent also acts on what moves no money: re-verifies a transaction at its
	// gateway, reviews KYC dossiers, suspends a merchant, and proposes a money decision (the
	// resolution of an unclear payout) for another person to approve.
	StaffSupportAgent StaffRole = "SUPPORT_AGENT"
	// StaffMoneyApprover also approves (or rejects) a money decision another staff member
	// proposed, verifies payout methods (where settlements go) and reinstates a suspended
	// merchant.
	StaffMoneyApprover StaffRole = "MONEY_APPROVER"
	// StaffAdmin also manages the staff: gives, changes and takes away roles.
	StaffAdmin StaffRole = "ADMIN"
)

// StaffRoles lists the roles, least trusted first.
var StaffRoles = []StaffRole{StaffSupportReadOnly, StaffSupportAgent, StaffMoneyApprover, StaffAdmin}

// Valid reports whether r is one of StaffRoles.
func (r StaffRole) Valid() bool { return r.rank() > 0 }

func (r StaffRole) rank() int {
	for i, s := range StaffRoles {
		if r == s {
			return i + 1
		}
	}
	return 0
}

// StaffPermission is one thing a staff member may do; each needs a least role.
type StaffPermission string

// The staff permissions.
const (
	PermRead                 StaffPermission = "read"
	PermReverify             StaffPermission = "reverify"
	PermReviewKYC            StaffPermission = "review_kyc"
	PermSuspendMerchant      StaffPermission = "suspend_merchant"
	PermProposeMoneyDecision StaffPermission = "propose_money_decision"
	PermApproveMoneyDecision StaffPermission = "approve_money_decision"
	PermVerifyPayoutMethod   StaffPermission = "verify_payout_method"
	PermReinstateMerchant    StaffPermission = "reinstate_merchant"
	PermManageStaff          StaffPermission = "manage_staff"
)

// leastRole is the least role each permission needs.
var leastRole = map[StaffPermission]StaffRole{
	PermRead:                 StaffSupportReadOnly,
	PermReverify:             StaffSupportAgent,
	PermReviewKYC:            StaffSupportAgent,
	PermSuspendMerchant:      StaffSupportAgent,
	PermProposeMoneyDecision: StaffSupportAgent,
	PermApproveMoneyDecision: StaffMoneyApprover,
	PermVerifyPayoutMethod:   StaffMoneyApprover,
	PermReinstateMerchant:    StaffMoneyApprover,
	PermManageStaff:          StaffAdmin,
}

// Can reports whether a member of role r may do p (a member who is not staff may do nothing).
func (r StaffRole) Can(p StaffPermission) bool {
	need, ok := leastRole[p]
	return ok && r.Valid() && r.rank() >= need.rank()
}

// Can reports whether the member is staff with a role that allows p.
func (m Member) Can(p StaffPermission) bool { return m.StaffRole.Can(p) }

// ErrStaffRole is the error of a staff member whose role does not allow an operation
// (role_forbidden, 403).
func ErrStaffRole(p StaffPermission) error {
	return Errorf(CodeRoleForbidden, "Your staff role does not allow this operation (it needs %s or above).", leastRole[p])
}

// LeastRole is the least role that allows p.
func LeastRole(p StaffPermission) StaffRole { return leastRole[p] }
