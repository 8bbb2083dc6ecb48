/**
 * habitus for Pi: capture, approved habits, advice and memory, by running the habitus binary on Pi's events.
 *
 * Tested with Pi 1.6.0 (@earendil-works/pi-coding-agent) and 0.73.1 (@mariozechner/pi-coding-agent).
 *
 * Install: copy this file to ~/.pi/agent/extensions/ (or a project's .pi/extensions/: Pi 1.6 loads a
 * project's extensions only once you trust them, e.g. `pi --approve`; 0.73 does not know that flag).
 * Turn on what you want with `habitus config set capture.enabled true`, `habitus config set
 * advise.enabled true` and `habitus config set memory.observe_enabled true` (select and the memory index
 * are on by default). Set HABITUS_BIN to use another program.
 *
 * Each event goes to `habitus hook --harness pi`, which runs every habitus command planned for it
 * (habitus.harness.plan) in order and answers once. The first event of a session starts it as a
 * process; its reply names the warm worker (`"worker": {"socket", "code"}`), and the session's next
 * events go to that worker over its Unix socket from this process (habitus.worker's frame, with a
 * JSON header), which costs no process start at all. Whenever the worker does not take an event (none
 * running, busy, warming, another habitus version, any error) it goes to a `habitus hook` process
 * instead, with the same result: the worker is only a cache.
 * - before_agent_start: `hook` runs `memory index`, `select` and `advise` (awaited, CONTEXT_TIMEOUT_MS)
 *   and answers their `additionalContext` joined, in that order: the memory index, the approved habits
 *   that apply to the prompt, advice waiting from the last review; it is appended to this run's system
 *   prompt. No answer, an error or nothing to say: the prompt is left as it is. In 1.6 the event is a
 *   union: only a run the user started (`messageType: "user"`) has a `prompt`; a run an extension
 *   started has none.
 * - agent_end fires once per attempt in 1.6 (an automatically retried provider error gives two, the
 *   second with only the retry's messages), so there the messages are collected, and agent_settled
 *   (Pi will not continue) hands them all, with the prompt, `aborted` and the session file, to `hook`,
 *   which runs `capture`, `advise` (a review; a note waits for the next prompt) and `memory observe`.
 *   In 0.73, which has no agent_settled, agent_end does that; a retried attempt then arrives without
 *   its prompt and capture stores nothing for it.
 * - session_shutdown: `hook` runs `capture` on the session file, a sweep of anything missed.
 * Every call has a deadline. The context calls get CONTEXT_TIMEOUT_MS: the prompt waits for them. The
 * others (agent_settled, agent_end, session_shutdown) get the whole hook budget (hooks.budget_ms, which
 * each `habitus hook` reply names as `budget_ms`; its default until one has): a review with a slow model
 * must not be cut at a shorter deadline than other harnesses give it. Handed to the worker, such a call
 * is the worker's, under that deadline, and Pi does not wait for it; started as a process, it is
 * awaited by `pi -p` (which waits for the children an extension started), and killed GRACE_MS after the
 * budget: habitus ends itself at its budget and logs it, so the kill is only for a habitus that cannot.
 * Every error is swallowed: habitus never disturbs the session.
 *
 * Pi extension API (docs/extensions.md and dist/core/extensions/types.d.ts of the package):
 * `pi.on("before_agent_start", (event, ctx))` carries `event.prompt` and `event.systemPrompt` and may
 * return `{ systemPrompt }`; `agent_end` carries `event.messages`; `agent_settled` carries `aborted`;
 * `session_shutdown` fires before exit; `ctx.cwd` and `ctx.sessionManager.getSessionId()` /
 * `getSessionFile()` name the session.
 *
 * Each call gets one JSON object on stdin:
 *   {"hook_event_name", "session_id", "session_file", "cwd", "timestamp", "prompt"?, "messages"?, "aborted"?}
 */
import { spawn } from "node:child_process";
import { connect } from "node:net";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

const CONTEXT_TIMEOUT_MS = 3000;
const DEFAULT_BUDGET_MS = 30000; // hooks.budget_ms's default, until a reply names the configured one
const GRACE_MS = 2000; // past the budget: habitus's own deadline (and its logging) comes first
const MAX_OUTPUT = 256 * 1024;
const MAX_TEXT = 16 * 1024;
const MAX_MESSAGES = 400;

function capText(text: any, keepTail: boolean): any {
	if (typeof text !== "string" || text.length <= MAX_TEXT) return text;
	return keepTail ? text.slice(text.length - MAX_TEXT) : text.slice(0, MAX_TEXT);
}

function slim(message: any): any {
	if (!message || typeof message !== "object") return undefined;
	const tail = message.role === "assistant";
	let content: any = message.content;
	if (typeof content === "string") content = capText(content, tail);
	else if (Array.isArray(content) && message.role !== "toolResult") {
		content = content
			.filter((b: any) => b && (b.type === "text" || b.type === "toolCall"))
			.map((b: any) => (b.type === "text" ? { type: "text", text: capText(b.text, tail) } : { type: "toolCall", id: b.id, name: b.name }));
	} else content = [];
	return {
		role: message.role,
		content,
		stopReason: message.stopReason,
		timestamp: message.timestamp,
		toolCallId: message.toolCallId,
		toolName: message.toolName,
		isError: message.isError,
	};
}

function base(name: string, ctx: any): any {
	const sessions = ctx && ctx.sessionManager;
	return {
		hook_event_name: name,
		session_id: sessions && sessions.getSessionId ? sessions.getSessionId() : undefined,
		session_file: sessions && sessions.getSessionFile ? sessions.getSessionFile() : undefined,
		cwd: ctx ? ctx.cwd : undefined,
		timestamp: new Date().toISOString(),
	};
}

// The warm worker this session may talk to itself: its socket and the code it must run, as the last
// `habitus hook` answered (`"worker": {"socket", "code"}`). Undefined until then, and again after any
// doubt: then the next event starts `habitus hook` as a process, which answers it afresh.
let worker: any = undefined; // { socket: string, code: string }
let budgetMs = DEFAULT_BUDGET_MS; // hooks.budget_ms, as the last `habitus hook` reply named it
const TURN_MS = 500; // as the Python client: a worker that has not taken the call by then will not
const WORKER_OFF = ["0", "off", "false", "no"];

function learn(reply: any): void {
	const budget = reply && reply.budget_ms;
	if (typeof budget === "number" && budget > 0) budgetMs = budget;
	const found = reply && reply.worker;
	worker =
		found && typeof found.socket === "string" && typeof found.code === "string"
			? { socket: found.socket, code: found.code }
			: undefined;
}

function contextOf(reply: any): string {
	return reply && typeof reply.additionalContext === "string" ? reply.additionalContext : "";
}

// Hand the event to the warm worker over its socket (habitus.worker's frame with a JSON header):
// resolve to its reply object ({} for none), or to undefined when it did not take the call (no worker,
// busy, warming, other code, any error): the caller then starts the process. With `wait` false it
// resolves as soon as the worker has taken the call, which it then finishes whatever this process does.
function viaWorker(event: any, wait: boolean, timeoutMs: number): Promise<any> {
	const target = worker;
	if (!target || WORKER_OFF.includes(String(process.env.HABITUS_WORKER || "").toLowerCase())) {
		return Promise.resolve(undefined);
	}
	return new Promise((resolve) => {
		let settled = false;
		let accepted = false;
		let data = Buffer.alloc(0);
		let socket: any = undefined;
		const finish = (value: any) => {
			if (settled) return;
			settled = true;
			clearTimeout(turn);
			clearTimeout(timer);
			try {
				socket.destroy();
			} catch {}
			resolve(value);
		};
		const turn = setTimeout(() => {
			if (!accepted) finish(undefined);
		}, TURN_MS);
		const timer = setTimeout(() => finish(accepted ? {} : undefined), timeoutMs);
		try {
			const header = Buffer.from(
				JSON.stringify({
					op: "run",
					protocol: 1,
					code: target.code,
					argv: ["hook", "--harness", "pi"],
					cwd: process.cwd(),
					env: Object.fromEntries(Object.entries(process.env).filter(([, v]) => typeof v === "string")),
					deadline: Number(process.hrtime.bigint()) / 1e9 + timeoutMs / 1000, // CLOCK_MONOTONIC, as Python's
				}),
				"utf8",
			);
			const body = Buffer.from(JSON.stringify(event), "utf8");
			const prefix = Buffer.alloc(8);
			prefix.writeUInt32BE((header.length | 0x80000000) >>> 0, 0); // the top bit: a JSON header
			prefix.writeUInt32BE(body.length, 4);
			socket = connect(target.socket);
			socket.on("error", () => finish(accepted ? {} : undefined));
			socket.on("close", () => finish(accepted ? {} : undefined));
			socket.on("data", (chunk: Buffer) => {
				data = Buffer.concat([data, chunk]);
				while (data.length >= 8) {
					const size = (data.readUInt32BE(0) & 0x7fffffff) >>> 0;
					const bodySize = data.readUInt32BE(4);
					if (data.length < 8 + size + bodySize) return;
					const answer = JSON.parse(data.subarray(8, 8 + size).toString("utf8"));
					const out = data.subarray(8 + size, 8 + size + bodySize).toString("utf8");
					data = data.subarray(8 + size + bodySize);
					if (answer.status === "accepted") {
						accepted = true;
						if (!wait) return finish({});
						continue;
					}
					if (answer.status === "done") return finish(out.trim() ? JSON.parse(out) : {});
					if (answer.status === "mismatch") worker = undefined; // another habitus: ask a process
					return finish(accepted ? {} : undefined);
				}
			});
			socket.write(Buffer.concat([prefix, header, body]));
		} catch {
			finish(accepted ? {} : undefined);
		}
	});
}

// Run `habitus hook --harness pi` with the event on stdin: resolve to its reply object ({} for none, an
// error or no answer in time). The child is killed when its deadline passes.
function viaProcess(event: any, timeoutMs: number): Promise<any> {
	return new Promise((resolve) => {
		let out = "";
		let done = false;
		const finish = (value: any) => {
			if (!done) {
				done = true;
				resolve(value);
			}
		};
		try {
			const child = spawn(process.env.HABITUS_BIN || "habitus", ["hook", "--harness", "pi"], {
				stdio: ["pipe", "pipe", "ignore"],
			});
			const timer = setTimeout(() => {
				try {
					child.kill("SIGKILL");
				} catch {}
				finish({});
			}, timeoutMs);
			child.on("error", () => {
				clearTimeout(timer);
				finish({});
			});
			child.stdin.on("error", () => {});
			child.stdout.on("data", (chunk: Buffer) => {
				if (out.length < MAX_OUTPUT) out += chunk.toString("utf8");
			});
			child.on("close", () => {
				clearTimeout(timer);
				try {
					finish(out.trim() ? JSON.parse(out) : {});
				} catch {
					finish({});
				}
			});
			child.stdin.end(JSON.stringify(event));
		} catch {
			finish({}); // habitus missing or not runnable: the session goes on
		}
	});
}

// One event to habitus: through the warm worker's socket when the session knows it, else (and whenever
// the worker does not take it) as a `habitus hook` process. With `wait`, resolve to the context it
// answers; without, resolve once the worker has taken the event (or at once, a process being started).
async function habitus(event: any, wait: boolean): Promise<string> {
	const budget = wait ? CONTEXT_TIMEOUT_MS : budgetMs;
	const served = await viaWorker(event, wait, budget);
	if (served !== undefined) {
		if (wait) learn(served);
		return contextOf(served);
	}
	const reply = viaProcess(event, wait ? budget : budget + GRACE_MS).then((answer: any) => {
		learn(answer);
		return contextOf(answer);
	});
	return wait ? reply : "";
}

export default function habitusExtension(pi: ExtensionAPI): void {
	let prompt: any = undefined;
	let settles = false; // Pi 1.6: agent_settled follows the last attempt's agent_end
	let collected: any = [];
	const report = (ctx: any, name: string, messages: any, aborted: any) => {
		const run = { ...base(name, ctx), prompt: capText(prompt, false), messages: messages.slice(-MAX_MESSAGES), aborted };
		prompt = undefined;
		collected = [];
		return habitus(run, false); // resolves once the worker has taken it (or a process is started)
	};
	pi.on("before_agent_start", async (event: any, ctx: any) => {
		settles = event.messageType !== undefined;
		const typed = event.messageType === undefined || event.messageType === "user";
		prompt = typed ? event.prompt : undefined;
		collected = [];
		const request = { ...base("before_agent_start", ctx), prompt: capText(prompt, false), messageType: event.messageType };
		const context = (await habitus(request, true)).trim();
		if (!context || typeof event.systemPrompt !== "string") return undefined;
		return { systemPrompt: `${event.systemPrompt}\n\n${context}` };
	});
	pi.on("agent_end", async (event: any, ctx: any) => {
		const messages = (event.messages || []).slice(-MAX_MESSAGES).map(slim).filter(Boolean);
		if (settles) {
			collected = collected.concat(messages).slice(-MAX_MESSAGES);
			return;
		}
		await report(ctx, "agent_end", messages, undefined);
	});
	pi.on("agent_settled", async (event: any, ctx: any) => {
		if (!settles) return;
		await report(ctx, "agent_settled", collected, event && event.aborted === true);
	});
	pi.on("session_shutdown", async (_event: any, ctx: any) => {
		await habitus(base("session_shutdown", ctx), false);
	});
}
