/**
 * habitus capture for Pi: hands every finished agent run to `habitus capture --harness pi`.
 *
 * Install: copy this file to ~/.pi/agent/extensions/ (or a project's .pi/extensions/), then turn
 * capture on with `habitus config set capture.enabled true`. Set HABITUS_BIN to use another program.
 *
 * Pi extension API (badlogic/pi-mono packages/coding-agent/docs/extensions.md and
 * src/core/extensions/types.ts): `pi.on("before_agent_start", (event, ctx))` carries `event.prompt`;
 * `pi.on("agent_end", (event, ctx))` carries `event.messages`, the run's user / assistant / toolResult
 * messages (the objects a session file stores); `pi.on("session_shutdown", ...)` fires before exit;
 * `ctx.cwd` and `ctx.sessionManager.getSessionId()` / `getSessionFile()` name the session.
 *
 * The event goes to habitus as one JSON object on stdin:
 *   {"hook_event_name", "session_id", "session_file", "cwd", "prompt", "messages", "timestamp"}
 * Message text is capped (habitus bounds and redacts it again); tool output is not sent.
 * Capture never disturbs the session: the child is not awaited and every error is swallowed.
 */
import { spawn } from "node:child_process";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

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

function send(event: any): void {
	try {
		const child = spawn(process.env.HABITUS_BIN || "habitus", ["capture", "--harness", "pi"], {
			stdio: ["pipe", "ignore", "ignore"],
		});
		child.on("error", () => {});
		child.stdin.on("error", () => {});
		child.stdin.end(JSON.stringify(event));
	} catch {
		// habitus missing or not runnable: the session goes on.
	}
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

export default function habitusCapture(pi: ExtensionAPI): void {
	let prompt: any = undefined;
	pi.on("before_agent_start", async (event: any) => {
		prompt = event.prompt;
	});
	pi.on("agent_end", async (event: any, ctx: any) => {
		const messages = (event.messages || []).slice(-MAX_MESSAGES).map(slim).filter(Boolean);
		send({ ...base("agent_end", ctx), prompt: capText(prompt, false), messages });
		prompt = undefined;
	});
	pi.on("session_shutdown", async (_event: any, ctx: any) => {
		send(base("session_shutdown", ctx));
	});
}
