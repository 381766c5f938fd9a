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
	return decideApproval(w, r, "Payout batch", func(ctx context.Context, merchant uuid.UUID, env sika.Environment, id, member uuid.UUID, note string) (sika.PayoutBatch, error) {
		b, err := s.store.DecidePayoutBatch(ctx, merchant, env, id, member, approve, note)
		if err == nil {
			s.signalPayoutBatch(ctx, id)
		}
		return b, err
	})
}

// approvePayout is a second member's approval of a payout over the merchant's threshold: it
// becomes PENDING and its workflow sends it. Dashboard only, as for batches.
func (s *Server) approvePayout(w http.ResponseWriter, r *http.Request) error {
	return s.decidePayout(w, r, true)
}

// rejectPayout refuses a payout that waits for approval: it ends FAILED approval_rejected and its
// hold is released.
func (s *Server) rejectPayout(w http.ResponseWriter, r *http.Request) error {
	return s.decidePayout(w, r, false)
}

func (s *Server) decidePayout(w http.ResponseWriter, r *http.Request, approve bool) error {
	return decideApproval(w, r, "Payout", func(ctx context.Context, merchant uuid.UUID, env sika.Environment, id, member uuid.UUID, note string) (sika.Transaction, error) {
		t, err := s.store.DecidePayout(ctx, merchant, env, id, member, approve, note)
		if err == nil {
			s.signalPayoutApproval(ctx, id)
		}
		return t, err
	})
}

// decideApproval reads a decision on something that waits for a second member (the path's id,
// an optional note of at most 500 characters), has decide record it for the member calling and
// answers what decide returns.
func decideApproval[T any](w http.ResponseWriter, r *http.Request, what string,
	decide func(ctx context.Context, merchant uuid.UUID, env sika.Environment, id, member uuid.UUID, note string) (T, error)) error {
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
		return sika.FieldError("note", "Ensure this field has no more than 500 characters.")
	}
	ctx := r.Context()
	merchant, env := tenant(ctx)
	out, err := decide(ctx, merchant, env, id, principalFrom(ctx).Member.ID, strings.TrimSpace(req.Note))
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, out)
	return nil
}

// signalPayoutApproval wakes a payout's workflow after a decision; a lost signal only delays it
// until its next periodic read.
func (s *Server) signalPayoutApproval(ctx context.Context, id uuid.UUID) {
	if s.cfg.Temporal == nil {
		return
	}
	if err := s.cfg.Temporal.SignalWorkflow(context.WithoutCancel(ctx), workflows.PayoutWorkflowID(id), "",
		workflows.SignalPayoutApprovalDecided, nil); err != nil {
		logFrom(ctx).Warn("signal payout workflow", "transaction", id, "err", err)
	}
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
