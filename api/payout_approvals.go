package api

import (
	"context"
	"net/http"
	"strings"

	"github.com/google/uuid"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/workflows"
)

// batchDecisionRequest is the body of a payout's or a batch's approve/ and reject/.
type batchDecisionRequest struct {
	Note string `json:"note"`
}

// decidePayoutBatch is a second member's decision on a batch that waits for one (dashboard only:
// an API key has no member, and the point of the rule is a second person). Approved, it becomes
// PROCESSING and its workflow sends it; rejected, it ends REJECTED and its hold is released.
func (s *Server) decidePayoutBatch(approve bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		return decideApproval(w, r, "Payout batch", approve, s.store.DecidePayoutBatch, s.signalPayoutBatch)
	}
}

// decidePayout is a second member's decision on a payout over the merchant's threshold
// (dashboard only, as for batches). Approved, it becomes PENDING and its workflow sends it;
// rejected, it ends FAILED approval_rejected and its hold is released.
func (s *Server) decidePayout(approve bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		return decideApproval(w, r, "Payout", approve, s.store.DecidePayout, s.signalPayoutApproval)
	}
}

// decideApproval reads a decision on something that waits for a second member (the path's id,
// an optional note of at most 500 characters), has decide record it for the member calling,
// wakes its workflow and answers what decide returns.
func decideApproval[T any](w http.ResponseWriter, r *http.Request, what string, approve bool,
	decide func(ctx context.Context, merchant uuid.UUID, env sika.Environment, id, member uuid.UUID, approve bool, note string) (T, error),
	wake func(ctx context.Context, id uuid.UUID)) error {
	id, err := pathUUID(r, "id", what)
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
		return sika.FieldError("note", msgTooLong(500))
	}
	ctx := r.Context()
	merchant, env := tenant(ctx)
	out, err := decide(ctx, merchant, env, id, principalFrom(ctx).Member.ID, approve, strings.TrimSpace(req.Note))
	if err != nil {
		return err
	}
	wake(ctx, id)
	writeData(w, http.StatusOK, out)
	return nil
}

// signalPayoutApproval wakes a payout's workflow after a decision (wake).
func (s *Server) signalPayoutApproval(ctx context.Context, id uuid.UUID) {
	s.wake(ctx, workflows.PayoutWorkflowID(id), workflows.SignalPayoutApprovalDecided)
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
func (s *Server) addTeamMember(w http.ResponseWriter, r *http.Request, req teamMemberRequest) error {
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
