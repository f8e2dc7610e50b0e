package session

import (
	"context"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/provider"
)

// What the kit in force (internal/agentkit) says of the agents it makes,
// for the methods that ask the Manager.

// Models lists what the agent's provider offers (the models method).
func (m *Manager) Models(ctx context.Context, alias string) (*protocol.ModelsResult, error) {
	return m.conf().Models(ctx, alias)
}

// AgentInfo describes what agent alias runs on: its provider and model.
func (m *Manager) AgentInfo(alias string) (provider.Info, error) { return m.conf().AgentInfo(alias) }

// SandboxStatus says how commands are confined (status).
func (m *Manager) SandboxStatus() protocol.SandboxStatus { return m.conf().SandboxStatus() }
