package api

import (
	"net/http"
	"strings"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
)

// batchDecisionRequest is the body of a batch's approve/ and reject/.
type batchDecisionRequest struct {
	Note string `json:"note"`
}

// approvePayoutBatch is a second member's approval of a batch that waits for one: it becomes
// PROCESSING and its workflow sends it. Dashboard only: an API key has no member, and the point
// of the rule is a second person.
func (s *Server) approvePayoutBatch(w http.ResponseWriter, r *http.Request) error {
	return s.decidePayoutBatch(w, r, true)
}

// rejectPayoutBatch refuses a batch that waits for approval: it ends REJECTED and its hold is
// released.
func (s *Server) rejectPayoutBatch(w http.ResponseWriter, r *http.Request) error {
	return s.decidePayoutBatch(w, r, false)
}

func (s *Server) decidePayoutBatch(w http.ResponseWriter, r *http.Request, approve bool) error {
	id, err := pathUUID(r, "id", "Payout batch")
	if err != nil {
		return err
	}
	var req batchDecisionRequest
	if r.ContentLength != 0 {
		if err := decodeBody(r, &req); err != nil {
			return err
		}
	}
	if len([]rune(req.Note)) > 500 {
		return sika.FieldError("note", "Ensure this field has no more than 500 characters.")
	}
	ctx := r.Context()
	merchant, env := tenant(ctx)
	p := principalFrom(ctx)
	b, err := s.store.DecidePayoutBatch(ctx, merchant, env, id, p.Member.ID, approve, strings.TrimSpace(req.Note))
	if err != nil {
		return err
	}
	s.signalPayoutBatch(ctx, id)
	writeData(w, http.StatusOK, b)
	return nil
}

// teamMemberRequest is the body of POST /team-members/.
type teamMemberRequest struct {
	Email string `json:"email"`
	Role  string `json:"role"`
}

// teamMember is a member of the merchant's team as the API shows it.
type teamMember struct {
	sika.Member
	Role     sika.MembershipRole `json:"role"`
	JoinedAt string              `json:"joined_at"`
}

func teamMemberOf(tm store.TeamMember) teamMember {
	return teamMember{Member: tm.Member, Role: tm.Role, JoinedAt: tm.JoinedAt.UTC().Format("2006-01-02T15:04:05.999999Z07:00")}
}

func (s *Server) listTeamMembers(w http.ResponseWriter, r *http.Request) error {
	merchant, _ := tenant(r.Context())
	team, err := s.store.MerchantTeam(r.Context(), merchant)
	if err != nil {
		return err
	}
	out := make([]teamMember, len(team))
	for i, tm := range team {
		out[i] = teamMemberOf(tm)
	}
	writeData(w, http.StatusOK, out)
	return nil
}

// addTeamMember gives a registered member a role in the merchant's team (ADMIN, DEVELOPER or
// VIEWER; the owner's role does not change).
func (s *Server) addTeamMember(w http.ResponseWriter, r *http.Request) error {
	var req teamMemberRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	var v sika.Validation
	email := strings.TrimSpace(req.Email)
	if email == "" {
		v.Add("email", sika.MsgRequired)
	} else if !validEmail(email) {
		v.Add("email", sika.MsgInvalidEmail)
	}
	role := sika.MembershipRole(strings.ToUpper(strings.TrimSpace(req.Role)))
	if !role.Valid() || role == sika.RoleOwner {
		v.Add("role", `Must be "ADMIN", "DEVELOPER" or "VIEWER".`)
	}
	if err := v.Err(); err != nil {
		return err
	}
	merchant, _ := tenant(r.Context())
	tm, err := s.store.AddTeamMember(r.Context(), merchant, email, role)
	if err != nil {
		return err
	}
	writeData(w, http.StatusCreated, teamMemberOf(tm))
	return nil
}
