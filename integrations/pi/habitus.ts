/**
 * habitus for Pi: capture, approved habits, advice and memory, by running the habitus binary on Pi's events.
 *
 * Install: copy this file to ~/.pi/agent/extensions/ (or a project's .pi/extensions/). Turn on what you
 * want with `habitus config set capture.enabled true` and `habitus config set advise.enabled true`
 * (select and the memory index are on by default). Set HABITUS_BIN to use another program.
 *
 * - before_agent_start: runs `habitus memory index`, `habitus select` and `habitus advise` (each with
 *   `--harness pi` and the event on stdin, in parallel, each given CONTEXT_TIMEOUT_MS) and appends what
 *   they answer as `additionalContext` to this run's system prompt, in that order: the memory index,
 *   the approved habits that apply to the prompt, advice waiting from the last review. No answer, an
 *   error or nothing to say: the prompt is left as it is.
 * - agent_end: hands the run's messages (text capped, tool output left out) to `habitus capture` and
 *   `habitus advise` (which reviews them; a note waits for the next prompt, Pi has no blocking channel),
 *   and the session file to `habitus memory observe`, which reads only what is new since its last run.
 * - session_shutdown: hands the session file to `habitus capture` for a sweep of anything missed.
 * Children started on agent_end and session_shutdown are not awaited, and every error is swallowed:
 * habitus never disturbs the session.
 *
 * Pi extension API (badlogic/pi-mono packages/coding-agent/docs/extensions.md and
 * src/core/extensions/types.ts): `pi.on("before_agent_start", (event, ctx))` carries `event.prompt` and
 * `event.systemPrompt` and may return `{ systemPrompt }`; `pi.on("agent_end", ...)` carries
 * `event.messages`, the run's user / assistant / toolResult messages; `session_shutdown` fires before
 * exit; `ctx.cwd` and `ctx.sessionManager.getSessionId()` / `getSessionFile()` name the session.
 *
 * Each call gets one JSON object on stdin:
 *   {"hook_event_name", "session_id", "session_file", "cwd", "timestamp", "prompt"?, "messages"?}
 */
import { spawn } from "node:child_process";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

const CONTEXT_TIMEOUT_MS = 3000;
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

// Run `habitus ARGS --harness pi` with the event on stdin. With `wait`, resolve to the additionalContext
// it answers ("" for none, an error or no answer in time); otherwise start it and resolve at once.
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
			child.on("error", () => finish(""));
			child.stdin.on("error", () => {});
			if (wait && child.stdout) {
				const timer = setTimeout(() => {
					child.kill();
					finish("");
				}, CONTEXT_TIMEOUT_MS);
				child.stdout.on("data", (chunk: Buffer) => {
					if (out.length < MAX_OUTPUT) out += chunk.toString("utf8");
				});
				child.on("close", () => {
					clearTimeout(timer);
					try {
						const reply = out.trim() ? JSON.parse(out) : {};
						finish(typeof reply.additionalContext === "string" ? reply.additionalContext : "");
					} catch {
						finish("");
					}
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
	pi.on("before_agent_start", async (event: any, ctx: any) => {
		prompt = event.prompt;
		const request = { ...base("before_agent_start", ctx), prompt: capText(event.prompt, false) };
		const parts = await Promise.all([
			habitus(["memory", "index"], request, true),
			habitus(["select"], request, true),
			habitus(["advise"], request, true),
		]);
		const context = parts.filter((part: string) => part.trim()).join("\n\n");
		if (!context || typeof event.systemPrompt !== "string") return undefined;
		return { systemPrompt: `${event.systemPrompt}\n\n${context}` };
	});
	pi.on("agent_end", async (event: any, ctx: any) => {
		const messages = (event.messages || []).slice(-MAX_MESSAGES).map(slim).filter(Boolean);
		const run = { ...base("agent_end", ctx), prompt: capText(prompt, false), messages };
		habitus(["capture"], run, false);
		habitus(["advise"], run, false);
		habitus(["memory", "observe"], base("agent_end", ctx), false);
		prompt = undefined;
	});
	pi.on("session_shutdown", async (_event: any, ctx: any) => {
		habitus(["capture"], base("session_shutdown", ctx), false);
	});
}
