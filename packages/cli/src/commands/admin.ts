import { FAULT_KINDS, FAULT_POINTS } from "@weir/protocol";
import { type Command, Option } from "commander";
import { namespaceUrlArg } from "../arguments.js";
import { UsageError } from "../cli-error.js";
import { defineAction, type RunState } from "../command-action.js";
import { formatFields } from "../format.js";
import { requestJson } from "../http-json.js";

interface AdminOptions {
  adminKey?: string;
  json?: boolean;
}

interface AdminCall {
  method: "GET" | "POST";
  route: string;
  body?: unknown;
}

const ACTIONS_HELP = `
Actions:
  status                        watermark, floor, counters, sizes, writer state, memory
  health                        whether the namespace answers
  writer [on|off]               show, enable or disable the writer (a disabled writer answers push with 503)
  retention <changes>           keep the newest <changes> versions of the change log
  visibility on|off             switch visibility filters on or off
  invalidate                    make every client reset once
  fault <point> <kind>          arm a one-shot fault; points: ${FAULT_POINTS.join(", ")}; kinds: ${FAULT_KINDS.join(", ")}
  fault clear                   disarm every fault
  drop-next-push-response       process the next push but drop its response

The URL names the namespace, as in http://127.0.0.1:4848/todo.
The admin key comes from --admin-key or the WEIR_ADMIN_KEY environment variable.`;

/** Turns `<action> [args...]` into one admin route call, or a usage error. */
export function adminCall(action: string, args: readonly string[]): AdminCall {
  const expectArgs = (count: number, usage: string) => {
    if (args.length !== count) throw new UsageError(`usage: weir admin <url> ${usage}`);
  };
  const onOff = (value: string | undefined, usage: string): boolean => {
    if (value === "on") return true;
    if (value === "off") return false;
    throw new UsageError(`usage: weir admin <url> ${usage}`);
  };
  switch (action) {
    case "status":
    case "health":
      expectArgs(0, action);
      return { method: "GET", route: action };
    case "writer":
      if (args.length === 0) return { method: "GET", route: "writer" };
      expectArgs(1, "writer [on|off]");
      return { method: "POST", route: "writer", body: { enabled: onOff(args[0], "writer [on|off]") } };
    case "visibility":
      expectArgs(1, "visibility on|off");
      return { method: "POST", route: "visibility", body: { enabled: onOff(args[0], "visibility on|off") } };
    case "retention": {
      expectArgs(1, "retention <changes>");
      const retainChanges = Number(args[0]);
      if (!/^\d+$/.test(args[0] ?? "") || !Number.isSafeInteger(retainChanges)) {
        throw new UsageError(
          "retention takes a whole number of changes, as in: weir admin <url> retention 10000",
        );
      }
      return { method: "POST", route: "retention", body: { retainChanges } };
    }
    case "invalidate":
    case "drop-next-push-response":
      expectArgs(0, action);
      return { method: "POST", route: action, body: {} };
    case "fault": {
      if (args.length === 1 && args[0] === "clear")
        return { method: "POST", route: "fault", body: { clear: true } };
      expectArgs(2, "fault <point> <kind> | fault clear");
      const [point, kind] = args as [string, string];
      if (!(FAULT_POINTS as readonly string[]).includes(point)) {
        throw new UsageError(`unknown fault point "${point}"; one of: ${FAULT_POINTS.join(", ")}`);
      }
      if (!(FAULT_KINDS as readonly string[]).includes(kind)) {
        throw new UsageError(`unknown fault kind "${kind}"; one of: ${FAULT_KINDS.join(", ")}`);
      }
      return { method: "POST", route: "fault", body: { point, kind } };
    }
    default:
      throw new UsageError(`unknown admin action "${action}" (run weir admin --help)`);
  }
}

export function registerAdmin(program: Command, state: RunState): void {
  const command = program
    .command("admin")
    .description("call a running server's admin routes for one namespace")
    .argument("<url>", "namespace URL, as in http://127.0.0.1:4848/todo", namespaceUrlArg)
    .argument(
      "<action>",
      "status | health | writer | retention | visibility | invalidate | fault | drop-next-push-response",
    )
    .argument("[args...]", "the action's arguments")
    .addOption(new Option("--admin-key <key>", "admin key (x-admin-key header)").env("WEIR_ADMIN_KEY"))
    .addHelpText("after", ACTIONS_HELP);
  defineAction(
    command,
    state,
    async (out, options: AdminOptions, url: URL, action: string, args: string[]) => {
      const call = adminCall(action, args);
      const target = new URL(`${url.pathname}/admin/${call.route}`, url);
      const answer = await requestJson(target, {
        method: call.method,
        headers: options.adminKey ? { "x-admin-key": options.adminKey } : {},
        body: call.body,
      });
      out.result(answer, (value) =>
        value !== null && typeof value === "object" && Object.keys(value).length > 0
          ? formatFields(value as Record<string, unknown>)
          : "ok",
      );
      return undefined;
    },
  );
}
