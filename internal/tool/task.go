package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// Sub-agents: the task tool starts a session of its own for a piece of
// work (a child of this one, which every client can watch); the model
// gets its answer, at once (foreground) or when it ends (background).
// The session implements Tasks.

// Tasks starts and drives a session's sub-agents.
type Tasks interface {
	// Agents are the agents a task may run (for the tool's description).
	Agents() []TaskAgent
	// Start starts a child session for t. In the foreground it returns
	// once the child's turn ended (ctx's end cancels it); in the
	// background at once.
	Start(ctx context.Context, t TaskStart) (TaskStatus, error)
	// Status says how a child stands.
	Status(id string) (TaskStatus, error)
	// Send steers a running child with prompt, or queues it behind its
	// turn; a child that ended runs it as a new turn (foreground:
	// waited for).
	Send(ctx context.Context, id, prompt string) (TaskStatus, error)
	// Cancel cancels a child's running turn.
	Cancel(id string) (TaskStatus, error)
}

// TaskAgent is an agent a task may run.
type TaskAgent struct {
	Name, Description string
}

// TaskStart is what a task call asks.
type TaskStart struct {
	ToolCallID, Description, Prompt, Agent string
	Background                             bool
}

// TaskStatus is how a child stands: the wire's subagent object, and how
// it ended in words when it did.
type TaskStatus struct {
	protocol.SubagentInfo
	// Answer is its last message whole (the tool result's).
	Answer string
}

const taskDescribe = "Start a sub-agent: a session of its own, in this directory, that works on prompt and answers with its final message. It sees only what prompt says (not this conversation): give it everything it needs. Use it for independent searches, parallel reviews or a long side task; several task calls in one reply run at once. background: true answers at once with its id (task_status, task_send, task_cancel reach it; you are told when it ends)."

type task struct{}

func (task) Spec() Spec {
	return Spec{Name: "task", Guide: "Delegate independent work (searches, reviews, a side task) to sub-agents with task; several at once run in parallel, and each sees only its prompt.",
		Description: taskDescribe, Schema: taskSchema(nil)}
}

// taskSchema is the task tool's schema, its agents listed.
func taskSchema(agents []TaskAgent) json.RawMessage {
	agent := map[string]any{"type": "string", "description": "the agent to run (default: this session's)"}
	if len(agents) > 0 {
		var names []string
		var b strings.Builder
		b.WriteString("the agent to run (default: this session's):")
		for _, a := range agents {
			names = append(names, a.Name)
			fmt.Fprintf(&b, "\n- %s", a.Name)
			if a.Description != "" {
				b.WriteString(": " + a.Description)
			}
		}
		agent = map[string]any{"type": "string", "enum": names, "description": b.String()}
	}
	s, _ := json.Marshal(map[string]any{"type": "object", "properties": map[string]any{
		"description": map[string]any{"type": "string", "description": "what it is to do, in 3 to 7 words"},
		"prompt":      map[string]any{"type": "string", "description": "the whole task: it sees nothing else"},
		"agent":       agent,
		"background":  map[string]any{"type": "boolean", "description": "answer at once with its id; you are told when it ends"},
	}, "required": []string{"description", "prompt"}})
	return s
}

// SpecFor lists the session's agents in the schema.
func (t task) SpecFor(env *Env) Spec {
	s := t.Spec()
	if env.Tasks != nil {
		s.Schema = taskSchema(env.Tasks.Agents())
	}
	return s
}
func (task) Asks() bool { return false }

// Effect: a child works in the same directory: what it changes during
// the call is the call's (the parent's checkpoint keeps it, so a rewind
// of the parent's turn undoes it).
func (task) Effect(*Env, json.RawMessage) Effect { return Effect{Anything: true} }
func (task) Kind() string                        { return protocol.KindThink }
func (task) Concurrent() bool                    { return true }
func (task) Summary(input json.RawMessage) string {
	var a struct{ Description string }
	json.Unmarshal(input, &a)
	return "Task: " + a.Description
}
func (task) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	var a struct {
		Description string `json:"description"`
		Prompt      string `json:"prompt"`
		Agent       string `json:"agent"`
		Background  bool   `json:"background"`
	}
	if err := decode(input, &a); err != nil {
		return errorf("%v", err)
	}
	if env.Tasks == nil {
		return errorf("sub-agents are not available here")
	}
	a.Description = strings.TrimSpace(a.Description)
	if a.Description == "" || strings.TrimSpace(a.Prompt) == "" {
		return errorf("description and prompt are required")
	}
	st, err := env.Tasks.Start(ctx, TaskStart{ToolCallID: env.CallID, Description: a.Description, Prompt: a.Prompt, Agent: a.Agent, Background: a.Background})
	if err != nil {
		return errorf("%v", err)
	}
	return taskResult(st)
}

// taskResult is what a task tool says of a child.
func taskResult(st TaskStatus) Result {
	d, _ := json.Marshal(map[string]any{"subagent": st.SubagentInfo})
	r := Result{Details: d}
	switch st.State {
	case protocol.SubagentRunning:
		r.Output = fmt.Sprintf("sub-agent %s (%s) is running in the background: task_status, task_send and task_cancel reach it by this id; you are told when it ends.", st.SessionID, st.Description)
	case protocol.SubagentCompleted:
		r.Output = st.Answer
		if strings.TrimSpace(r.Output) == "" {
			r.Output = "(the sub-agent ended without an answer)"
		}
	default:
		r.IsError = true
		r.Output = fmt.Sprintf("sub-agent %s (%s) %s", st.SessionID, st.Description, st.State)
		if st.Summary != "" {
			r.Output += ": " + st.Summary
		}
	}
	return r
}

// taskID reads a task tool's id argument.
func taskID(input json.RawMessage) (string, *Result) {
	var a struct {
		ID string `json:"id"`
	}
	if err := decode(input, &a); err != nil {
		r := errorf("%v", err)
		return "", &r
	}
	if a.ID == "" {
		r := errorf("id is required (a sub-agent's session id)")
		return "", &r
	}
	return a.ID, nil
}

var taskIDSchema = schema(`{"type":"object","properties":{"id":{"type":"string","description":"the sub-agent's session id"}},"required":["id"]}`)

type taskStatus struct{}

func (taskStatus) Spec() Spec {
	return Spec{Name: "task_status", Guide: "task_status says how a background sub-agent stands, and its answer once it ended.",
		Description: "How a sub-agent stands: running, completed (with its answer), failed, cancelled or interrupted.", Schema: taskIDSchema}
}
func (taskStatus) Asks() bool   { return false }
func (taskStatus) Kind() string { return protocol.KindRead }
func (taskStatus) Summary(input json.RawMessage) string {
	id, _ := taskID(input)
	return "Status of " + id
}
func (taskStatus) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	id, bad := taskID(input)
	if bad != nil {
		return *bad
	}
	if env.Tasks == nil {
		return errorf("sub-agents are not available here")
	}
	st, err := env.Tasks.Status(id)
	if err != nil {
		return errorf("%v", err)
	}
	r := taskResult(st)
	if st.State == protocol.SubagentRunning {
		r.Output = fmt.Sprintf("sub-agent %s (%s) is still running", st.SessionID, st.Description)
	}
	return r
}

type taskSend struct{}

func (taskSend) Spec() Spec {
	return Spec{Name: "task_send", Guide: "Steer a running sub-agent, or give one that ended a follow-up, with task_send.",
		Description: "Send a sub-agent more: into its running turn (it reads it at its next step), or, once it ended, as a new turn whose answer this call returns.",
		Schema:      schema(`{"type":"object","properties":{"id":{"type":"string"},"prompt":{"type":"string"}},"required":["id","prompt"]}`)}
}
func (taskSend) Asks() bool   { return false }
func (taskSend) Kind() string { return protocol.KindOther }
func (taskSend) Summary(input json.RawMessage) string {
	id, _ := taskID(input)
	return "Message to " + id
}
func (taskSend) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	var a struct {
		ID     string `json:"id"`
		Prompt string `json:"prompt"`
	}
	if err := decode(input, &a); err != nil {
		return errorf("%v", err)
	}
	if a.ID == "" || strings.TrimSpace(a.Prompt) == "" {
		return errorf("id and prompt are required")
	}
	if env.Tasks == nil {
		return errorf("sub-agents are not available here")
	}
	st, err := env.Tasks.Send(ctx, a.ID, a.Prompt)
	if err != nil {
		return errorf("%v", err)
	}
	if st.State == protocol.SubagentRunning {
		d, _ := json.Marshal(map[string]any{"subagent": st.SubagentInfo})
		return Result{Output: fmt.Sprintf("sent to sub-agent %s: it reads it at its next step", a.ID), Details: d}
	}
	return taskResult(st)
}

type taskCancel struct{}

func (taskCancel) Spec() Spec {
	return Spec{Name: "task_cancel", Guide: "Stop a sub-agent you no longer need with task_cancel.",
		Description: "Cancel a sub-agent's running turn.", Schema: taskIDSchema}
}
func (taskCancel) Asks() bool   { return false }
func (taskCancel) Kind() string { return protocol.KindOther }
func (taskCancel) Summary(input json.RawMessage) string {
	id, _ := taskID(input)
	return "Cancel " + id
}
func (taskCancel) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	id, bad := taskID(input)
	if bad != nil {
		return *bad
	}
	if env.Tasks == nil {
		return errorf("sub-agents are not available here")
	}
	st, err := env.Tasks.Cancel(id)
	if err != nil {
		return errorf("%v", err)
	}
	return taskResult(st)
}
