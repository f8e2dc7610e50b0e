package store

import (
	"context"
	"database/sql"
	"fmt"
)

// Token is a gateway bearer token as stored: its hash, never the token.
type Token struct {
	ID         string
	Name       string
	Kind       string // "token" (a script's) or "browser" (a dashboard's session)
	Hash       []byte // SHA-256 of the token
	CreatedMs  int64
	LastUsedMs int64 // 0: never used
}

// CreateToken stores a new token.
func (s *Store) CreateToken(t Token) error {
	return s.do("", func(ctx context.Context, c *sql.Conn) error {
		_, err := c.ExecContext(ctx, `INSERT INTO gateway_tokens (id, name, kind, hash, created_ms, last_used_ms) VALUES (?, ?, ?, ?, ?, ?)`,
			t.ID, t.Name, t.Kind, t.Hash, t.CreatedMs, t.LastUsedMs)
		return err
	})
}

// RevokeToken deletes a token; false when there was none with that id.
func (s *Store) RevokeToken(id string) (bool, error) {
	var n int64
	err := s.do("", func(ctx context.Context, c *sql.Conn) error {
		r, err := c.ExecContext(ctx, `DELETE FROM gateway_tokens WHERE id = ?`, id)
		if err == nil {
			n, err = r.RowsAffected()
		}
		return err
	})
	return n > 0, err
}

// TouchToken records a token's use (queued, not waited for).
func (s *Store) TouchToken(id string, ms int64) {
	s.enqueue(op{run: func(ctx context.Context, c *sql.Conn) error {
		_, err := c.ExecContext(ctx, `UPDATE gateway_tokens SET last_used_ms = ? WHERE id = ? AND last_used_ms < ?`, ms, id, ms)
		return err
	}, after: func(error) {}})
}

// Tokens lists every token, oldest first.
func (s *Store) Tokens(ctx context.Context) ([]Token, error) {
	rows, err := s.rdb.QueryContext(ctx, `SELECT id, name, kind, hash, created_ms, last_used_ms FROM gateway_tokens ORDER BY created_ms, id`)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	defer rows.Close()
	var out []Token
	for rows.Next() {
		var t Token
		if err := rows.Scan(&t.ID, &t.Name, &t.Kind, &t.Hash, &t.CreatedMs, &t.LastUsedMs); err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	return out, nil
}
