package session

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// Watch makes c follow the list of sessions (internal/sessionlist)
// until it closes.
func (m *Manager) Watch(c *Client) {
	f := follower{c}
	m.list.Follow(f)
	c.onClose(func() { m.list.Unfollow(f) })
}

// follower is a client as the list's follower.
type follower struct{ c *Client }

func (f follower) Notify(method string, params any) { f.c.notify(method, params) }

// Rename sets a session's title (session/rename): one line, at most
// MaxTitle characters; "" clears it. It needs no attachment: like
// delete, it acts on the stored session.
func (m *Manager) Rename(ctx context.Context, id, t string) (*protocol.SessionInfo, error) {
	t = strings.Join(strings.FieldsFunc(t, unicode.IsSpace), " ")
	if r := []rune(t); len(r) > MaxTitle {
		return nil, &protocol.ParamsError{Field: "title", Reason: fmt.Sprintf("longer than %d characters", MaxTitle)}
	}
	ok, err := m.store.Rename(id, t)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	m.list.Changed(id)
	m.log.Info("session renamed", "sessionId", id)
	return m.arch.Get(ctx, id)
}

// MaxTitle bounds a session's title, in characters.
const MaxTitle = 200

// title is a session's title from its first prompt, as a person would
// write it: the first line with words, without Markdown's marks (a
// heading's #, a quote's >, a list's bullet, emphasis and code
// backticks, a link's target), its spaces collapsed, cut at 80
// characters.
func title(prompt string) string {
	line := ""
	for l := range strings.Lines(prompt) {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "```") || strings.HasPrefix(l, "~~~") {
			continue
		}
		l = strings.TrimLeft(l, "#> \t")
		for _, bullet := range []string{"- ", "* ", "+ "} {
			l = strings.TrimPrefix(l, bullet)
		}
		if strings.TrimFunc(l, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) != "" {
			line = l
			break
		}
	}
	line = mdLink().ReplaceAllString(line, "$1")
	line = strings.NewReplacer("**", "", "__", "", "`", "").Replace(line)
	line = strings.Join(strings.Fields(line), " ")
	r := []rune(line)
	if len(r) > 80 {
		r = append(r[:79], '…')
	}
	return string(r)
}
