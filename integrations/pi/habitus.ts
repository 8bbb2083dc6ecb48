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
 * Each event goes to ONE process, `habitus hook --harness pi`, which runs every habitus command planned
 * for it (habitus.harness.plan) in order and answers once: one process start per event instead of one
 * per command (with the warm worker, most of a hook's cost is starting that process).
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
 * Every child gets a deadline (CONTEXT_TIMEOUT_MS, or BACKGROUND_TIMEOUT_MS for what is not awaited)
 * and is killed after it: `pi -p` waits for the children an extension started, so a hung habitus must
 * not keep it open. Every error is swallowed: habitus never disturbs the session.
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
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

const CONTEXT_TIMEOUT_MS = 3000;
const BACKGROUND_TIMEOUT_MS = Number(process.env.HABITUS_PI_TIMEOUT_MS) || 10000;
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

// Run `habitus ARGS --harness pi` (ARGS: `hook`) with the event on stdin. With `wait`, resolve to the additionalContext
// it answers ("" for none, an error or no answer in time); otherwise resolve at once. Either way the
// child is killed when its deadline passes.
function habitus(args: string[], event: any, wait: boolean): Promise<string> {
	return new Promise((resolve) => {
		let out = "";
		let done = false;
		const finish = (value: string) => {
			if (!done) {
				done = true;
				resolve(value);
			}
		};
		try {
			const child = spawn(process.env.HABITUS_BIN || "habitus", [...args, "--harness", "pi"], {
				stdio: ["pipe", wait ? "pipe" : "ignore", "ignore"],
			});
			const timer = setTimeout(
				() => {
					try {
						child.kill("SIGKILL");
					} catch {}
					finish("");
				},
				wait ? CONTEXT_TIMEOUT_MS : BACKGROUND_TIMEOUT_MS,
			);
			child.on("error", () => {
				clearTimeout(timer);
				finish("");
			});
			child.stdin.on("error", () => {});
			child.on("close", () => {
				clearTimeout(timer);
				try {
					const reply = out.trim() ? JSON.parse(out) : {};
					finish(typeof reply.additionalContext === "string" ? reply.additionalContext : "");
				} catch {
					finish("");
				}
			});
			if (wait && child.stdout) {
				child.stdout.on("data", (chunk: Buffer) => {
					if (out.length < MAX_OUTPUT) out += chunk.toString("utf8");
				});
			} else {
				finish("");
			}
			child.stdin.end(JSON.stringify(event));
		} catch {
			finish(""); // habitus missing or not runnable: the session goes on
		}
	});
}

export default function habitusExtension(pi: ExtensionAPI): void {
	let prompt: any = undefined;
	let settles = false; // Pi 1.6: agent_settled follows the last attempt's agent_end
	let collected: any = [];
	const report = (ctx: any, name: string, messages: any, aborted: any) => {
		const run = { ...base(name, ctx), prompt: capText(prompt, false), messages: messages.slice(-MAX_MESSAGES), aborted };
		habitus(["hook"], run, false);
		prompt = undefined;
		collected = [];
	};
	pi.on("before_agent_start", async (event: any, ctx: any) => {
		settles = event.messageType !== undefined;
		const typed = event.messageType === undefined || event.messageType === "user";
		prompt = typed ? event.prompt : undefined;
		collected = [];
		const request = { ...base("before_agent_start", ctx), prompt: capText(prompt, false), messageType: event.messageType };
		const context = (await habitus(["hook"], request, true)).trim();
		if (!context || typeof event.systemPrompt !== "string") return undefined;
		return { systemPrompt: `${event.systemPrompt}\n\n${context}` };
	});
	pi.on("agent_end", async (event: any, ctx: any) => {
		const messages = (event.messages || []).slice(-MAX_MESSAGES).map(slim).filter(Boolean);
		if (settles) {
			collected = collected.concat(messages).slice(-MAX_MESSAGES);
			return;
		}
		report(ctx, "agent_end", messages, undefined);
	});
	pi.on("agent_settled", async (event: any, ctx: any) => {
		if (!settles) return;
		report(ctx, "agent_settled", collected, event && event.aborted === true);
	});
	pi.on("session_shutdown", async (_event: any, ctx: any) => {
		habitus(["hook"], base("session_shutdown", ctx), false);
	});
}
