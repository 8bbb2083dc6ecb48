/**
 * habitus memory for Pi: the memory index in the system prompt, and observational memory after each run.
 *
 * Install: copy this file to ~/.pi/agent/extensions/ (or a project's .pi/extensions/). Set HABITUS_BIN
 * to use another program.
 *
 * - before_agent_start: runs `habitus memory index --harness pi` with the event on stdin and appends the
 *   `additionalContext` it answers (pins first, then recent memories; at most memory.index_budget
 *   characters) to this run's system prompt. No answer within INDEX_TIMEOUT_MS, an error, or an empty
 *   index: the prompt is left as it is.
 * - agent_end: hands the session file to `habitus memory observe --harness pi`, which reads only what
 *   is new since its last run (a byte watermark per session file) and stores rated observations. The
 *   child is not awaited and every error is swallowed: memory never disturbs the session.
 *
 * Pi extension API (badlogic/pi-mono packages/coding-agent/docs/extensions.md): a `before_agent_start`
 * handler may return `{ systemPrompt }` to replace the run's system prompt; `ctx.cwd` and
 * `ctx.sessionManager.getSessionId()` / `getSessionFile()` name the session.
 */
import { spawn } from "node:child_process";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

const INDEX_TIMEOUT_MS = 1500;
const MAX_OUTPUT = 256 * 1024;

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
			const child = spawn(process.env.HABITUS_BIN || "habitus", args, {
				stdio: ["pipe", wait ? "pipe" : "ignore", "ignore"],
			});
			child.on("error", () => finish(""));
			child.stdin.on("error", () => {});
			if (wait && child.stdout) {
				const timer = setTimeout(() => {
					child.kill();
					finish("");
				}, INDEX_TIMEOUT_MS);
				child.stdout.on("data", (chunk: Buffer) => {
					if (out.length < MAX_OUTPUT) out += chunk.toString("utf8");
				});
				child.on("close", () => {
					clearTimeout(timer);
					finish(out);
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

export default function habitusMemory(pi: ExtensionAPI): void {
	pi.on("before_agent_start", async (event: any, ctx: any) => {
		const answer = await habitus(
			["memory", "index", "--harness", "pi"],
			{ ...base("before_agent_start", ctx), prompt: typeof event.prompt === "string" ? event.prompt.slice(0, 4096) : undefined },
			true,
		);
		let context = "";
		try {
			const reply = answer.trim() ? JSON.parse(answer) : {};
			context = typeof reply.additionalContext === "string" ? reply.additionalContext : "";
		} catch {
			context = "";
		}
		if (!context || typeof event.systemPrompt !== "string") return undefined;
		return { systemPrompt: `${event.systemPrompt}\n\n${context}` };
	});
	pi.on("agent_end", async (_event: any, ctx: any) => {
		habitus(["memory", "observe", "--harness", "pi"], base("agent_end", ctx), false);
	});
}
