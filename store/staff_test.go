package store_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
)

// Staff decide on merchants (KYC, suspension, money), so a staff account belongs to no merchant:
// a member of a merchant's team gets no staff role, a staff member joins no team and owns no
// merchant, and a reviewer who belongs to a merchant all the same does not decide on its KYC.
func TestStaffAccountsBelongToNoMerchant(t *testing.T) {
	ctx := t.Context()
	admin := newStaff(t, sika.StaffAdmin)

	owner, m, err := st.RegisterMember(ctx, uuid.NewString()+"@example.com", "x", "Owner", "", &store.NewMerchant{Name: "Shop", Country: "CI"})
	require.NoError(t, err)
	_, err = st.SetStaffRole(ctx, owner.Email, sika.StaffSupportAgent, admin)
	require.Error(t, err)
	assert.Equal(t, sika.CodeValidation, sika.ErrorCode(err), "%v", err)
	err = st.SetMemberPassword(ctx, owner.ID, "y", sika.StaffAdmin)
	assert.Equal(t, sika.CodeValidation, sika.ErrorCode(err), "bootstrap gives no role to a merchant's member: %v", err)
	again, err := st.MemberByID(ctx, owner.ID)
	require.NoError(t, err)
	assert.False(t, again.IsStaff, "the owner is still no staff")

	agent := newStaff(t, sika.StaffSupportAgent)
	_, err = st.AddTeamMember(ctx, m.ID, agent.Email, sika.RoleAdmin)
	assert.Equal(t, sika.CodeValidation, sika.ErrorCode(err), "a staff member joins no team: %v", err)
	_, err = st.CreateMerchant(ctx, agent.ID, store.NewMerchant{Name: "Side shop", Country: "BJ"})
	assert.Equal(t, sika.CodeRoleForbidden, sika.ErrorCode(err), "a staff member owns no merchant: %v", err)
	team, err := st.MerchantTeam(ctx, m.ID)
	require.NoError(t, err)
	assert.Len(t, team, 1, "the owner alone")

	// A reviewer in the merchant's team (an account from before the rule) does not decide.
	d, err := st.SubmitKYCDossier(ctx, sika.KYCDossier{Merchant: m.ID, KYCType: sika.KYCIndividual, FirstName: "A", LastName: "B"}, owner.ID)
	require.NoError(t, err)
	_, err = st.Pool().Exec(ctx, `UPDATE members SET staff_role = 'ADMIN' WHERE id = $1`, owner.ID)
	require.NoError(t, err)
	_, err = st.ReviewKYCDossier(ctx, d.ID, owner.ID, sika.KYCDossierApproved, "mine")
	assert.Equal(t, sika.CodeSelfApprovalForbidden, sika.ErrorCode(err), "%v", err)
	merchant, err := st.MerchantByID(ctx, m.ID)
	require.NoError(t, err)
	assert.NotEqual(t, sika.KYCVerified, merchant.KYCStatus, "nothing approved")
	_, err = st.ReviewKYCDossier(ctx, d.ID, admin.ID, sika.KYCDossierApproved, "checked")
	require.NoError(t, err, "another staff member decides")
}

// A role given while the same person is added to a team: one of the two wins, never both.
func TestStaffRoleAndTeamMembershipRace(t *testing.T) {
	ctx := t.Context()
	admin := newStaff(t, sika.StaffAdmin)
	m := newMerchant(t)
	for range 8 {
		p, _, err := st.RegisterMember(ctx, "p-"+uuid.NewString()[:8]+"@example.com", "x", "P", "", nil)
		require.NoError(t, err)
		var wg sync.WaitGroup
		var roleErr, teamErr error
		wg.Go(func() { _, roleErr = st.SetStaffRole(ctx, p.Email, sika.StaffSupportAgent, admin) })
		wg.Go(func() { _, teamErr = st.AddTeamMember(ctx, m.ID, p.Email, sika.RoleAdmin) })
		wg.Wait()
		assert.True(t, (roleErr == nil) != (teamErr == nil), "exactly one wins: role %v, team %v", roleErr, teamErr)
		for _, err := range []error{roleErr, teamErr} {
			if err != nil {
				assert.Equal(t, sika.CodeValidation, sika.ErrorCode(err), "%v", err)
			}
		}
	}
}

// Support's search finds a transaction by its id (what merchants see in answers and webhooks)
// and by its Sika reference typed in any case, as well as by the operators' references.
func TestSupportSearchFindsByIDAndReferenceInAnyCase(t *testing.T) {
	ctx := t.Context()
	p := newPayment(t, newMerchant(t), "75")
	for _, q := range []string{p.Reference, strings.ToLower(p.Reference), " " + p.ID.String() + " ", strings.ToUpper(p.ID.String())} {
		found, err := st.TransactionsByReference(ctx, q, 10)
		require.NoError(t, err)
		if assert.Len(t, found, 1, "%q", q) {
			assert.Equal(t, p.ID, found[0].ID)
		}
	}
	found, err := st.TransactionsByReference(ctx, "PAY-NOTHING-LIKE-IT", 10)
	require.NoError(t, err)
	assert.Empty(t, found)
}
