package session

import (
	"errors"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/turnslot"
)

// What the turn slot (internal/turnslot, the session's t) holds: the
// session's jobs, steers and approvals, sent and answered by its
// clients.
type (
	turns    = turnslot.Slot[*job, *Client]
	steer    = turnslot.Steer[*Client]
	approval = turnslot.Approval[*Client]
	answer   = turnslot.Answer[*Client]
)

// TurnMismatch is a steer for a turn that is not the one running (an
// ErrBusy).
type TurnMismatch = turnslot.TurnMismatch

// Ticket, AsSteer, ClientMessageID and NoAsk are what the slot reads of
// a job (turnslot.Job).
func (j *job) Ticket() *turnslot.Ticket { return &j.slot }

func (j *job) AsSteer() steer { return steer{Text: j.prompt, Images: j.images, Client: j.client} }

func (j *job) ClientMessageID() string {
	if j.in == nil {
		return ""
	}
	return j.in.cmid
}

func (j *job) NoAsk() bool { return j.noAsk }

// steered is the prompt that the steers a turn took but never showed
// the model become (turnslot's End).
func steered(x steer) *job {
	return &job{prompt: x.Text, images: x.Images, client: x.Client, done: make(chan protocol.SessionPromptResult, 1)}
}

// slotErr is the slot's error as the session's: a closing session is
// not found.
func slotErr(err error) error {
	if errors.Is(err, turnslot.ErrClosed) {
		return ErrNotFound
	}
	return err
}
