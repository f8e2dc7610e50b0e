// An ACP client built on @agentclientprotocol/sdk (2.x): spawns
// `<zeroclaw> acp`, then initialize → session/new → a streamed prompt →
// a prompt whose tool asks permission (answered allow_once) → a cancelled
// prompt → session/load from a second agent process → from a third, an
// editor with file access: session/resume, session/set_config_option
// (mode full), a write_file answered through fs/write_text_file,
// session/list and session/close → from a fourth, the steering
// extension: a steer into a running turn, a second prompt queued behind
// it, an idle steer answered promptRequired → from a fifth, a task (a
// sub-agent): the parent's updates kept raw (the Go test validates each
// against the ACP schema), then session/load of the child's session from
// a sixth → from a seventh, a streaming prompt during which the daemon
// is killed (kill -9): the agent reconnects to the next daemon, which
// goes on with the turn, and the prompt is answered once; then the goal
// extension (_session/goal): a goal met on its first turn. Prints one
// JSON summary line; exits non-zero on any failure.
import { execFileSync, spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const [zeroclaw, cwd] = process.argv.slice(2);

function start(updates, asked, writes) {
  const child = spawn(zeroclaw, ["acp"], { stdio: ["pipe", "pipe", "inherit"] });
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  let app = acp.client({ name: "zeroclaw-interop" })
    .onNotification("session/update", ({ params }) => { updates.push(params.update); })
    .onRequest("session/request_permission", ({ params: p }) => {
      asked.push(p);
      // allow_once, or a request's first option (a plan's: proceed).
      const id = p.options.some((o) => o.optionId === "allow_once") ? "allow_once" : p.options[0].optionId;
      return { outcome: { outcome: "selected", optionId: id } };
    });
  if (writes) {
    app = app
      .onRequest("fs/write_text_file", ({ params: p }) => { writes.push({ path: p.path, content: p.content }); return {}; })
      .onRequest("fs/read_text_file", ({ params: p }) => ({ content: "buffer of " + p.path }));
  }
  return { child, stream, app };
}

const text = (us) => us.filter((u) => u.sessionUpdate === "agent_message_chunk").map((u) => u.content.text).join("");
const out = {};
const updates = [], asked = [];
const a = start(updates, asked);
await a.app.connectWith(a.stream, async (ctx) => {
  const init = await ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
  out.protocolVersion = init.protocolVersion;
  out.loadSession = init.agentCapabilities.loadSession;
  const { sessionId } = await ctx.request("session/new", { cwd, mcpServers: [] });
  out.sessionId = sessionId;
  let r = await ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "hello from node" }] });
  out.first = { stopReason: r.stopReason, text: text(updates) };
  updates.length = 0;
  r = await ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: '/tool shell {"command":"echo node-approved"}' }] });
  out.tool = { stopReason: r.stopReason, asked: asked.length, kinds: updates.map((u) => u.sessionUpdate + ":" + (u.status ?? "")) ,
    output: updates.filter((u) => u.status === "completed").map((u) => u.content[0].content.text).join("") };
  updates.length = 0;
  const pending = ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "/delay 10\n/chunks 1000" }] });
  while (updates.length < 3) await new Promise((res) => setTimeout(res, 10));
  await ctx.notify("session/cancel", { sessionId });
  out.cancel = (await pending).stopReason;
});
a.child.kill();

const replay = [], asked2 = [];
const b = start(replay, asked2);
await b.app.connectWith(b.stream, async (ctx) => {
  await ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
  await ctx.request("session/load", { sessionId: out.sessionId, cwd, mcpServers: [] });
  out.replay = { users: replay.filter((u) => u.sessionUpdate === "user_message_chunk").map((u) => u.content.text), events: replay.length };
});
b.child.kill();

const updates3 = [], asked3 = [], writes = [];
const c = start(updates3, asked3, writes);
await c.app.connectWith(c.stream, async (ctx) => {
  await ctx.request("initialize", { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } } });
  const resumed = await ctx.request("session/resume", { sessionId: out.sessionId, cwd, mcpServers: [] });
  const set = await ctx.request("session/set_config_option", { sessionId: out.sessionId, configId: "mode", value: "full" });
  const mode = set.configOptions.find((o) => o.id === "mode").currentValue;
  const r = await ctx.request("session/prompt", { sessionId: out.sessionId, prompt: [{ type: "text", text: '/tool write_file {"path":"node.txt","content":"from node"}' }] });
  const list = await ctx.request("session/list", {});
  await ctx.request("session/close", { sessionId: out.sessionId });
  out.editor = { resumedOptions: (resumed.configOptions || []).length, mode, stopReason: r.stopReason, asked: asked3.length, writes,
    commands: updates3.filter((u) => u.sessionUpdate === "available_commands_update").length,
    listed: list.sessions.length };
});
c.child.kill();

const updates4 = [], asked4 = [];
const d = start(updates4, asked4);
await d.app.connectWith(d.stream, async (ctx) => {
  const init = await ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: "node-editor", version: "1" } });
  const { sessionId } = await ctx.request("session/new", { cwd, mcpServers: [] });
  const order = [];
  const running = ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "/delay 5\n/chunks 200" }] })
    .then((r) => { order.push("running"); return r; });
  const queued = ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "queued from node" }] })
    .then((r) => { order.push("queued"); return r; });
  while (!updates4.some((u) => u.sessionUpdate === "agent_message_chunk")) await new Promise((res) => setTimeout(res, 10));
  const steered = await ctx.request("_session/steering", { sessionId, prompt: [{ type: "text", text: "steered from node" }] });
  const [r1, r2] = await Promise.all([running, queued]);
  const idle = await ctx.request("_session/steering", { sessionId, prompt: [{ type: "text", text: "idle" }],
    _meta: { steering: { idleBehavior: "promptRequired" } } });
  out.steering = { supported: init._meta?.steering?.supported === true, outcome: steered.outcome, stopReasons: [r1.stopReason, r2.stopReason],
    order, text: text(updates4), idle: idle.outcome, reason: idle.reason };
});
d.child.kill();

const updates5 = [], asked5 = [];
const e = start(updates5, asked5);
await e.app.connectWith(e.stream, async (ctx) => {
  await ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
  const { sessionId } = await ctx.request("session/new", { cwd, mcpServers: [] });
  const task = { description: "a node helper", prompt: "/chunks 3\nhello from the child" };
  const r = await ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "/tool task " + JSON.stringify(task) }] });
  const call = updates5.find((u) => u.sessionUpdate === "tool_call" && (u.title || "").includes("a node helper"));
  const child = updates5.map((u) => u._meta?.zeroclaw?.subagent?.sessionId).find((id) => id);
  out.task = { stopReason: r.stopReason, kind: call?.kind, child,
    texts: updates5.filter((u) => u.toolCallId === call?.toolCallId && u.content)
      .map((u) => u.content.map((c) => c.content?.text ?? "").join("")),
    updates: updates5.map((u) => ({ sessionId, update: u })) };
});
e.child.kill();

const replay6 = [];
const f = start(replay6, []);
await f.app.connectWith(f.stream, async (ctx) => {
  await ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
  await ctx.request("session/load", { sessionId: out.task.child, cwd, mcpServers: [] });
  out.childLoad = { users: replay6.filter((u) => u.sessionUpdate === "user_message_chunk").map((u) => u.content.text), text: text(replay6) };
});
f.child.kill();

const updates7 = [], asked7 = [];
const g = start(updates7, asked7);
await g.app.connectWith(g.stream, async (ctx) => {
  await ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
  const { sessionId } = await ctx.request("session/new", { cwd, mcpServers: [] });
  const pending = ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "/delay 20\n/chunks 150" }] });
  while (!updates7.some((u) => u.sessionUpdate === "agent_message_chunk")) await new Promise((res) => setTimeout(res, 10));
  const { pid } = JSON.parse(execFileSync(zeroclaw, ["status", "--output-format", "json"]).toString());
  process.kill(pid, "SIGKILL");
  const killedAt = updates7.length;
  const r = await pending;
  const after = updates7.slice(killedAt);
  const resumed = updates7.find((u) => u._meta?.zeroclaw?.turnResumed);
  // The goal extension: a goal met on its first turn.
  const init = await ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} }).catch(() => null);
  const set = await ctx.request("_session/goal", { sessionId, objective: '/tool goal_done {"summary":"met from node"}', budget: { turns: 3 } });
  while (!updates7.some((u) => u._meta?.goal?.state === "met")) await new Promise((res) => setTimeout(res, 10));
  const got = await ctx.request("_session/goal", { sessionId });
  const cleared = await ctx.request("_session/goal", { sessionId, action: "clear", keep: true });
  out.goal = { advertised: init?._meta?.goal?.supported === true, setState: set.goal.state, state: got.goal.state, summary: got.goal.summary,
    line: updates7.find((u) => u._meta?.goal?.state === "met").content.text, cleared: cleared.goal.state, kept: cleared.goal.keep === true };
  // The plan mode: exit_plan asks with the plan as the call's content;
  // proceeding switches the mode option.
  await ctx.request("session/set_config_option", { sessionId, configId: "mode", value: "plan" });
  const pr = await ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: '/tool exit_plan {"plan":"1. read\\n2. write"}' }] });
  const planAsk = asked7.find((p) => p.toolCall.kind === "switch_mode");
  const resumedAfterPlan = await ctx.request("session/resume", { sessionId, cwd, mcpServers: [] });
  out.plan = { stopReason: pr.stopReason, request: planAsk, options: planAsk ? planAsk.options.map((o) => o.optionId) : [],
    content: planAsk ? planAsk.toolCall.content[0].content.text : "", mode: resumedAfterPlan.configOptions.find((o) => o.id === "mode").currentValue };
  out.killed = { stopReason: r.stopReason, pid, chunksAfter: after.filter((u) => u.sessionUpdate === "agent_message_chunk").length,
    resumed: resumed ? { kind: resumed.sessionUpdate, attempt: resumed._meta.zeroclaw.turnResumed.attempt, text: resumed.content.text } : null,
    updates: updates7.map((u) => ({ sessionId, update: u })) };
});
g.child.kill();
console.log(JSON.stringify(out));
