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

// taskArgs are the task tool's arguments. SpecFor narrows agent to the
// session's agents; the member stays the field below.
type taskArgs struct {
	Description string `json:"description" jsonschema:"what it is to do, in 3 to 7 words"`
	Prompt      string `json:"prompt" jsonschema:"the whole task: it sees nothing else"`
	Agent       string `json:"agent,omitempty" jsonschema:"the agent to run (default: this session's)"`
	Background  bool   `json:"background,omitempty" jsonschema:"answer at once with its id; you are told when it ends"`
}

type task struct{ takes[taskArgs] }

func (t task) Spec() Spec {
	return Spec{Name: "task", Guide: "Delegate independent work (searches, reviews, a side task) to sub-agents with task; several at once run in parallel, and each sees only its prompt.",
		Description: taskDescribe, Schema: t.schema()}
}

// withAgents is the task tool's schema with agent narrowed to agents,
// each listed with what it is for; the rest is taskArgs's as made.
func withAgents(base json.RawMessage, agents []TaskAgent) json.RawMessage {
	if len(agents) == 0 {
		return base
	}
	var s map[string]any
	if err := json.Unmarshal(base, &s); err != nil {
		panic("tool: the task schema: " + err.Error())
	}
	agent := s["properties"].(map[string]any)["agent"].(map[string]any)
	var names []string
	var b strings.Builder
	b.WriteString(agent["description"].(string) + ":")
	for _, a := range agents {
		names = append(names, a.Name)
		fmt.Fprintf(&b, "\n- %s", a.Name)
		if a.Description != "" {
			b.WriteString(": " + a.Description)
		}
	}
	agent["enum"], agent["description"] = names, b.String()
	out, _ := json.Marshal(s)
	return out
}

// SpecFor lists the session's agents in the schema.
func (t task) SpecFor(env *Env) Spec {
	s := t.Spec()
	if env.Tasks != nil {
		s.Schema = withAgents(s.Schema, env.Tasks.Agents())
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
func (t task) Summary(input json.RawMessage) string {
	a, _ := t.args(input)
	return "Task: " + a.Description
}
func (t task) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	a, err := t.args(input)
	if err != nil {
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

// TaskDetails are a task tool's result's details: the child it
// concerns.
type TaskDetails struct {
	Subagent protocol.SubagentInfo `json:"subagent"`
}

// taskResult is what a task tool says of a child.
func taskResult(st TaskStatus) Result {
	d, _ := json.Marshal(TaskDetails{Subagent: st.SubagentInfo})
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

// taskIDArgs are the arguments of the task tools that name a sub-agent
// only: task_status and task_cancel.
type taskIDArgs struct {
	ID string `json:"id" jsonschema:"the sub-agent's session id"`
}

// taskID is the id a task tool's call names, from its decoded
// arguments (a, err): a result to give back instead when there is none.
func taskID(a taskIDArgs, err error) (string, *Result) {
	if err != nil {
		r := errorf("%v", err)
		return "", &r
	}
	if a.ID == "" {
		r := errorf("id is required (a sub-agent's session id)")
		return "", &r
	}
	return a.ID, nil
}

type taskStatus struct{ takes[taskIDArgs] }

func (t taskStatus) Spec() Spec {
	return Spec{Name: "task_status", Guide: "task_status says how a background sub-agent stands, and its answer once it ended.",
		Description: "How a sub-agent stands: running, completed (with its answer), failed, cancelled or interrupted.", Schema: t.schema()}
}
func (taskStatus) Asks() bool   { return false }
func (taskStatus) Kind() string { return protocol.KindRead }
func (t taskStatus) Summary(input json.RawMessage) string {
	a, _ := t.args(input)
	return "Status of " + a.ID
}
func (t taskStatus) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	id, bad := taskID(t.args(input))
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

// taskSendArgs are task_send's arguments.
type taskSendArgs struct {
	ID     string `json:"id"`
	Prompt string `json:"prompt"`
}

type taskSend struct{ takes[taskSendArgs] }

func (t taskSend) Spec() Spec {
	return Spec{Name: "task_send", Guide: "Steer a running sub-agent, or give one that ended a follow-up, with task_send.",
		Description: "Send a sub-agent more: into its running turn (it reads it at its next step), or, once it ended, as a new turn whose answer this call returns.",
		Schema:      t.schema()}
}
func (taskSend) Asks() bool   { return false }
func (taskSend) Kind() string { return protocol.KindOther }
func (t taskSend) Summary(input json.RawMessage) string {
	a, _ := t.args(input)
	return "Message to " + a.ID
}
func (t taskSend) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	a, err := t.args(input)
	if err != nil {
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
		d, _ := json.Marshal(TaskDetails{Subagent: st.SubagentInfo})
		return Result{Output: fmt.Sprintf("sent to sub-agent %s: it reads it at its next step", a.ID), Details: d}
	}
	return taskResult(st)
}

type taskCancel struct{ takes[taskIDArgs] }

func (t taskCancel) Spec() Spec {
	return Spec{Name: "task_cancel", Guide: "Stop a sub-agent you no longer need with task_cancel.",
		Description: "Cancel a sub-agent's running turn.", Schema: t.schema()}
}
func (taskCancel) Asks() bool   { return false }
func (taskCancel) Kind() string { return protocol.KindOther }
func (t taskCancel) Summary(input json.RawMessage) string {
	a, _ := t.args(input)
	return "Cancel " + a.ID
}
func (t taskCancel) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	id, bad := taskID(t.args(input))
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
	// The cancel did what was asked (a sub-agent cancelled, or one that
	// had ended already): not an error, whatever state it ends in.
	r := taskResult(st)
	r.IsError = false
	if st.State != protocol.SubagentCancelled && st.State != protocol.SubagentRunning {
		r.Output = fmt.Sprintf("sub-agent %s (%s) had already ended (%s): there was nothing to cancel", st.SessionID, st.Description, st.State)
	}
	return r
}
