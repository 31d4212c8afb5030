#!/usr/bin/env node
// A Tichu bot that keeps no game state: it reads each DecisionRequest's observation_json and
// answers from the request alone (README "Bots in other languages"). It uses nothing but
// proto/tichu/v1/referee.proto, loaded at run time, and the JSON forms that
// proto/tichu/v1/schema/ describes.
//
//   node bot.js [SERVER [TOKEN]] [--insecure] [--ca-file FILE] [--name NAME]
//   node bot.js --arena HOST:PORT --key-file FILE [--insecure] [--ca-file FILE]
//
// SERVER defaults to $TICHU_SERVER or localhost:50051, TOKEN to $TICHU_TOKEN (which keeps it
// out of process listings). The connection uses TLS unless --insecure (or TICHU_INSECURE=1).
// The result is one line on standard output; the exit code is 0 once the match is over, 1 when
// it could not be played, 2 for bad arguments.
//
// With --arena, the bot waits in an arena's lobby (service Arena, rpc Lobby) with the key from
// the key file in the call's metadata, and plays every seat the arena gives it, game after game:
// the first Ctrl-C leaves the lobby and finishes the games in progress, the second exits.
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");

const PROTOCOL_VERSION = 1;
const PROTO_ROOT = process.env.TICHU_PROTO_DIR || path.resolve(__dirname, "..", "..", "proto");
const RETRIES = 5; // reconnections in a row after a dropped stream

function parseArgs(argv) {
  const options = { insecure: process.env.TICHU_INSECURE === "1", caFile: null, name: "node-example" };
  const positional = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--insecure") options.insecure = true;
    else if (arg === "--ca-file") options.caFile = argv[++i];
    else if (arg === "--name") options.name = argv[++i];
    else if (arg === "--token") positional[1] = argv[++i];
    else if (arg === "--server") positional[0] = argv[++i];
    else if (arg === "--arena") options.arena = argv[++i];
    else if (arg === "--key-file") options.keyFile = argv[++i];
    else if (arg.startsWith("--")) throw new Error(`unknown option ${arg}`);
    else positional.push(arg);
  }
  options.server = positional[0] || process.env.TICHU_SERVER || "localhost:50051";
  options.token = positional[1] || process.env.TICHU_TOKEN || "";
  if (options.arena) {
    if (!options.keyFile) throw new Error("--arena needs --key-file (the key tichu arena bot add gave)");
    return options;
  }
  if (!options.token) throw new Error("no seat token: give it as the second argument or in $TICHU_TOKEN");
  return options;
}

function loadReferee() {
  const definition = protoLoader.loadSync("tichu/v1/referee.proto", {
    includeDirs: [PROTO_ROOT],
    keepCase: true, // field names as in the proto: request_id, observation_json
    longs: String, // uint64 ids and versions as decimal strings, sent back as they came
    enums: String, // "DECISION_KIND_PLAY"
    defaults: true,
    oneofs: true, // message.kind names the oneof field that is set
  });
  return grpc.loadPackageDefinition(definition).tichu.v1;
}

// ------------------------------------------------------------------ the decision, from the request

const QUIET = { DECISION_KIND_GRAND_TICHU: "no_grand_tichu", DECISION_KIND_TICHU_STEP: "no_tichu" };

// The answer to one request, from its observation alone: no call, decline every bomb window,
// the lowest play (the listing is lowest first, R-DEF-3), the first Dragon recipient; in the
// exchange the lowest cards of the hand, one to each recipient.
function decide(request) {
  const obs = JSON.parse(request.observation_json);
  const listing = obs.legal_decisions;
  if (!Array.isArray(listing)) {
    // An exchange is described, not listed: give one card of the hand to each seat of exchange_to.
    const hand = obs.hand.split(" ");
    const gifts = listing.exchange_to.map((to, i) => `${to}:${hand[i]}`);
    return { text: `exchange ${gifts.join(" ")}` };
  }
  let text;
  if (QUIET[request.kind] && listing.includes(QUIET[request.kind])) text = QUIET[request.kind];
  else if (request.kind === "DECISION_KIND_BOMB_WINDOW") text = "decline";
  else text = listing.find((a) => a !== "pass") || listing[0];
  // The structured form the referee listed, sent back unchanged (text alone would do as well).
  return request.legal_actions.find((a) => a.text === text) || { text };
}

// ------------------------------------------------------------------ one stream

function unbundle(message) {
  return message.kind === "bundle" ? message.bundle.messages : [message];
}

// Play on one stream until it ends; resolves with the MatchResult, or null if the stream ended
// without one (dropped: the caller reconnects). `joined()` is called on the Welcome.
function playStream(client, options, log, joined) {
  return new Promise((resolve, reject) => {
    const call = client.Play();
    let result = null;
    const send = (message) => call.write(message);
    // A request can arrive twice (a network that repeats, a Snapshot after the request itself):
    // each is answered once on a stream. Request ids only grow, so the highest answered is enough;
    // it is about the stream, not the game, and a new stream starts it afresh.
    let answered = -1;
    const answer = (request) => {
      const id = Number(request.request_id);
      if (id <= answered) return;
      answered = id;
      const action = decide(request);
      send({ decision: { request_id: request.request_id, state_version: request.state_version, action } });
    };
    call.on("data", (envelope) => {
      for (const message of unbundle(envelope)) {
        switch (message.kind) {
          case "welcome":
            joined();
            log(`seat ${message.welcome.seat} of match ${message.welcome.match_id}`);
            break;
          case "snapshot":
            // A reconnection's open request comes here: answered like any other.
            for (const request of message.snapshot.pending) answer(request);
            break;
          case "request":
            answer(message.request);
            break;
          case "ping":
            send({ pong: { nonce: message.ping.nonce } });
            break;
          case "rejection": {
            const r = message.rejection;
            log(`rejected: ${r.reason} ${r.rule} ${r.message} (request ${r.request_id})`);
            break;
          }
          case "result":
            result = message.result;
            call.end(); // nothing more to say
            break;
          default: // events, cancellations, seat statuses: nothing to keep
            break;
        }
      }
    });
    call.on("error", (error) => {
      if (result) resolve(result);
      else if (error.code === grpc.status.UNAVAILABLE) resolve(null);
      else reject(error);
    });
    call.on("end", () => resolve(result));
    send({
      hello: {
        token: options.token,
        bot_name: options.name,
        bot_version: "1.0.0",
        protocol_version: PROTOCOL_VERSION,
        accept_bundles: true,
        referee_declines: true,
        referee_passes: true,
        defer_events: true, // it reads no events: the referee holds them until its next request
      },
    });
  });
}

// ------------------------------------------------------------------ one seat, reconnecting

// Play one seat to its result, reopening a dropped stream; the result, or null.
async function playSeat(client, options, log) {
  for (let attempt = 0; attempt <= RETRIES; attempt++) {
    if (attempt > 0) await new Promise((done) => setTimeout(done, 500 * 2 ** (attempt - 1)));
    const result = await playStream(client, options, log, () => (attempt = 0));
    if (result) return result;
    log(`the stream dropped; reconnecting (${attempt + 1} of ${RETRIES})`);
  }
  return null;
}

// ------------------------------------------------------------------ an arena's lobby

// Wait in the arena's lobby and play every seat it gives, until Ctrl-C; the exit code.
async function playInArena(tichu, credentials, options, log) {
  const key = fs.readFileSync(options.keyFile, "utf8").trim();
  const lobby = new tichu.Arena(options.arena, credentials);
  const referees = new Map(); // address -> Referee client
  const games = new Set();
  let leaving = false;
  let call = null;
  process.on("SIGINT", () => {
    if (leaving) process.exit(130);
    leaving = true;
    log("leaving the lobby; finishing the games in progress (Ctrl-C again: at once)");
    if (call) call.cancel();
  });
  const seat = (seated) => {
    // A referee that listens on every address is reached by the arena's host name.
    let address = seated.address;
    const [host, port] = [address.slice(0, address.lastIndexOf(":")), address.slice(address.lastIndexOf(":") + 1)];
    if (["0.0.0.0", "::", "[::]", ""].includes(host)) address = `${options.arena.slice(0, options.arena.lastIndexOf(":"))}:${port}`;
    if (!referees.has(address)) referees.set(address, new tichu.Referee(address, credentials));
    const game = playSeat(referees.get(address), { ...options, token: seated.seat_token }, log)
      .then((result) => {
        if (result) process.stdout.write(`match ${result.match_id}: ${result.scores.join(" - ")} (${result.reason})\n`);
      })
      .catch((error) => log(`seat of ${seated.match_id}: ${error.details || error.message}`))
      .finally(() => games.delete(game));
    games.add(game);
  };
  let failures = 0;
  let code = 0;
  while (!leaving && failures <= RETRIES) {
    const metadata = new grpc.Metadata();
    metadata.set("authorization", `Bearer ${key}`);
    const ended = await new Promise((resolve) => {
      call = lobby.Lobby({ games: 2, bot_version: "1.0.0" }, metadata);
      call.on("data", (message) => {
        failures = 0;
        if (message.kind === "welcome") {
          options.name = message.welcome.bot;
          log(`in the lobby as ${message.welcome.bot} (${message.welcome.leaderboard}, ${message.welcome.state})`);
        } else if (message.kind === "seated") seat(message.seated);
        else if (message.kind === "notice") log(`the arena says: ${message.notice.state} ${message.notice.reason}`);
      });
      call.on("error", (error) => resolve(error));
      call.on("end", () => resolve(null));
    });
    if (leaving) break;
    const refused = ended && [grpc.status.UNAUTHENTICATED, grpc.status.PERMISSION_DENIED, grpc.status.FAILED_PRECONDITION, grpc.status.INVALID_ARGUMENT].includes(ended.code);
    if (refused) {
      log(`the arena refused the bot: ${ended.details}`);
      code = 1;
      break;
    }
    failures += 1;
    await new Promise((done) => setTimeout(done, Math.min(500 * 2 ** (failures - 1), 15000)));
  }
  await Promise.all([...games]);
  lobby.close();
  for (const client of referees.values()) client.close();
  return code;
}

async function main() {
  let options;
  try {
    options = parseArgs(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${error.message}\n`);
    return 2;
  }
  const log = (line) => process.stderr.write(`[${options.name}] ${line}\n`);
  const tichu = loadReferee();
  const credentials = options.insecure
    ? grpc.credentials.createInsecure()
    : grpc.credentials.createSsl(options.caFile ? fs.readFileSync(options.caFile) : null);
  if (options.arena) return playInArena(tichu, credentials, options, log);
  const client = new tichu.Referee(options.server, credentials);
  try {
    const result = await playSeat(client, options, log);
    if (result) {
      const [a, b] = result.scores;
      process.stdout.write(`match ${result.match_id}: ${a} - ${b} (${result.reason})\n`);
      return 0;
    }
    log("could not reach the referee");
    return 1;
  } catch (error) {
    log(`the referee ended the stream: ${error.code} ${error.details || error.message}`);
    return 1;
  } finally {
    client.close();
  }
}

main().then((code) => process.exit(code));
