// llmgym view: the episode list, one episode with its frames, and two runs compared.
// Every piece of episode text reaches the page as a text node (el() below), never as HTML.
"use strict";

const PAGE = 50;
let RUNS = null;
let stopPlayer = null;

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "class") node.className = value;
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

async function api(path) {
  const response = await fetch(path);
  const body = await response.json();
  if (!response.ok) throw new Error(body.error || response.statusText);
  return body;
}

function route() {
  const hash = location.hash.replace(/^#/, "") || "/";
  const [path, search] = hash.split("?");
  return { path, params: new URLSearchParams(search || "") };
}

function go(path, params) {
  const query = params ? new URLSearchParams(params).toString() : "";
  location.hash = query ? `${path}?${query}` : path;
}

function outcomeBadge(episode) {
  if (episode.error) return el("span", { class: "badge bad", title: episode.error }, "error");
  return episode.success
    ? el("span", { class: "badge ok" }, "success")
    : el("span", { class: "badge bad" }, "failed");
}

function runName(id) {
  const run = RUNS.runs.find((r) => r.id === Number(id));
  return run ? run.name : `run ${id}`;
}

function main(...children) {
  if (stopPlayer) stopPlayer();
  stopPlayer = null;
  const node = document.getElementById("main");
  node.replaceChildren(...children);
  return node;
}

function markNav(name) {
  for (const id of ["nav-list", "nav-compare"]) {
    document.getElementById(id).classList.toggle("active", id === name);
  }
}

function backButton() {
  return el("p", {}, el("button", { id: "back", onclick: () => history.back() }, "‹ back"));
}

// ------------------------------------------------------------------ the list
const FILTERS = ["run", "env_id", "agent", "split", "success", "min_invalid", "max_invalid",
  "min_turns", "max_turns", "q"];

function select(id, name, value, options) {
  return el("select", { id, name },
    el("option", { value: "" }, "any"),
    options.map(([v, label]) => el("option", { value: v, selected: String(v) === value }, label)));
}

async function showList(params) {
  markNav("nav-list");
  const value = (name) => params.get(name) || "";
  const form = el("form", { class: "filters", id: "filters", onsubmit: (e) => e.preventDefault() },
    el("label", {}, "run", select("filter-run", "run", value("run"),
      RUNS.runs.map((r) => [r.id, r.name]))),
    el("label", {}, "environment", select("filter-env", "env_id", value("env_id"),
      RUNS.env_ids.map((v) => [v, v]))),
    el("label", {}, "agent", select("filter-agent", "agent", value("agent"),
      RUNS.agents.map((v) => [v, v]))),
    el("label", {}, "split", select("filter-split", "split", value("split"),
      RUNS.splits.map((v) => [v, v || "(none)"]))),
    el("label", {}, "outcome", select("filter-success", "success", value("success"),
      [["true", "success"], ["false", "failed"]])),
    el("label", {}, "invalid ≥", el("input", { id: "filter-min-invalid", name: "min_invalid",
      type: "number", min: 0, value: value("min_invalid") })),
    el("label", {}, "invalid ≤", el("input", { id: "filter-max-invalid", name: "max_invalid",
      type: "number", min: 0, value: value("max_invalid") })),
    el("label", {}, "turns ≥", el("input", { id: "filter-min-turns", name: "min_turns",
      type: "number", min: 0, value: value("min_turns") })),
    el("label", {}, "turns ≤", el("input", { id: "filter-max-turns", name: "max_turns",
      type: "number", min: 0, value: value("max_turns") })),
    el("label", {}, "instruction contains", el("input", { id: "filter-q", name: "q",
      type: "search", value: value("q"), placeholder: "search" })));
  let timer = null;
  const apply = () => {
    const next = {};
    for (const name of FILTERS) {
      const field = form.elements[name];
      if (field && field.value !== "") next[name] = field.value;
    }
    go("/", next);
  };
  form.addEventListener("change", apply);
  form.addEventListener("input", (event) => {
    if (event.target.type !== "search") return;
    clearTimeout(timer);
    timer = setTimeout(apply, 250);
  });

  const query = new URLSearchParams();
  for (const name of FILTERS) if (params.get(name)) query.set(name, params.get(name));
  const offset = Number(params.get("offset") || 0);
  query.set("offset", offset);
  query.set("limit", PAGE);
  const status = el("div", { class: "pager" });
  const table = el("table", { id: "episode-table" });
  const typing = document.activeElement && document.activeElement.id === "filter-q";
  main(form, status, table);
  if (typing) {
    const search = form.elements.q;
    search.focus();
    search.setSelectionRange(search.value.length, search.value.length);
  }
  let page;
  try {
    page = await api(`/api/episodes?${query}`);
  } catch (error) {
    status.replaceChildren(el("span", { class: "error" }, error.message));
    return;
  }
  const last = Math.min(offset + page.items.length, page.total);
  const move = (delta) => {
    const next = Object.fromEntries(params);
    next.offset = Math.max(0, offset + delta);
    go("/", next);
  };
  status.replaceChildren(
    el("button", { id: "page-prev", disabled: offset === 0, onclick: () => move(-PAGE) }, "‹ prev"),
    el("span", { id: "page-info" },
      page.total ? `${offset + 1}–${last} of ${page.total.toLocaleString("en")}` : "no episodes"),
    el("button", { id: "page-next", disabled: last >= page.total, onclick: () => move(PAGE) },
      "next ›"));
  table.replaceChildren(
    el("thead", {}, el("tr", {}, ["#", "run", "environment", "task", "agent", "split", "outcome",
      "turns", "invalid", "reward", "instruction"].map((h) => el("th", {}, h)))),
    el("tbody", {}, page.items.map((e) => el("tr", {
      "data-id": e.id, onclick: () => go(`/episode/${e.id}`) },
      el("td", { class: "num" }, e.id),
      el("td", {}, runName(e.run)),
      el("td", {}, e.env_id),
      el("td", {}, e.task_id),
      el("td", {}, e.agent),
      el("td", {}, e.split),
      el("td", {}, outcomeBadge(e),
        e.frames ? [" ", el("span", { class: "badge none", title: "frames recorded" }, "frames")]
          : null),
      el("td", { class: "num" }, e.turns),
      el("td", { class: "num" }, e.invalid_actions),
      el("td", { class: "num" }, e.reward.toFixed(2)),
      el("td", { class: "text", title: e.instruction }, e.instruction)))));
}

// ------------------------------------------------------------------ one episode
function flags(turn) {
  const out = [];
  if (turn.format_error) out.push(el("span", { class: "badge bad" }, "format error"));
  else if (turn.invalid_action) out.push(el("span", { class: "badge warn" }, "invalid action"));
  return out;
}

function turnCard(turn, index) {
  const classes = ["turn"];
  if (turn.format_error) classes.push("format-error");
  else if (turn.invalid_action) classes.push("invalid");
  return el("div", { class: classes.join(" "), "data-turn": index },
    el("div", { class: "head" },
      el("strong", {}, `Turn ${index + 1}`),
      el("span", { class: "muted" }, `reward ${Number(turn.reward).toFixed(2)}`),
      flags(turn)),
    el("div", { class: "label" }, "Observation"),
    el("pre", { class: "observation" }, turn.observation),
    turn.thought ? [el("div", { class: "label" }, "Thought"),
      el("pre", { class: "thought" }, turn.thought)] : null,
    el("div", { class: "label" }, "Action"),
    turn.action === null
      ? el("pre", { class: "reply" }, turn.reply)
      : el("pre", { class: "action" }, turn.action));
}

// Turns are drawn 200 at a time (a long episode would otherwise build thousands of cards at
// once); "show more" and the player draw further ones on demand.
const TURN_CHUNK = 200;

function turnList(turns) {
  const nodes = [];
  const container = el("div", { class: "turns" });
  const more = el("button", { id: "more-turns" });
  const grow = (count) => {
    const stop = Math.min(count, turns.length);
    while (nodes.length < stop) {
      const node = turnCard(turns[nodes.length], nodes.length);
      nodes.push(node);
      container.append(node);
    }
    const left = turns.length - nodes.length;
    more.hidden = left === 0;
    more.textContent = `show ${Math.min(left, TURN_CHUNK)} more turns (${left} not shown)`;
  };
  more.addEventListener("click", () => grow(nodes.length + TURN_CHUNK));
  grow(TURN_CHUNK);
  return { node: el("div", {}, container, more), nodes, reach: (index) => grow(index + 1) };
}

function outcomeBox(record) {
  const how = record.error ? `ended by an error: ${record.error}`
    : record.truncated ? "truncated (out of turns)"
    : record.terminated ? "terminated" : "";
  return el("div", { class: "box", id: "outcome" },
    el("h3", {}, "Outcome"),
    el("div", {}, outcomeBadge(record), " ",
      `total reward ${Number(record.total_reward || 0).toFixed(2)}`, how ? ` · ${how}` : "",
      record.skills && record.skills.length ? ` · skills: ${record.skills.join(", ")}` : ""),
    record.final_observation !== undefined
      ? [el("div", { class: "label muted" }, "Final observation"),
        el("pre", { class: "final-observation" }, record.final_observation)] : null);
}

function player(record, turns, prefix) {
  const count = record.frames;
  const texts = count ? null
    : [...record.turns.map((t) => t.observation), record.final_observation || ""];
  const steps = count || texts.length;
  let index = 0;
  let timer = null;
  let current = null;
  const view = count
    ? el("img", { id: `${prefix}player-img`, alt: "frame", width: 256, height: 256 })
    : el("pre", { class: "frame-text", id: `${prefix}player-text` });
  const slider = el("input", { type: "range", min: 0, max: steps - 1, value: 0,
    id: `${prefix}player-slider` });
  const label = el("span", { id: `${prefix}player-step`, class: "muted" });
  const play = el("button", { id: `${prefix}player-play` }, "▶ play");
  if (count) view.addEventListener("load", () => { view.dataset.shown = String(index); });
  const show = (next) => {
    index = Math.max(0, Math.min(steps - 1, next));
    if (count) view.src = `/api/episodes/${record.id}/frames/${index}.png`;
    else view.textContent = texts[index];
    slider.value = index;
    label.textContent = `step ${index} / ${steps - 1}`;
    if (index < record.turns.length) turns.reach(index);
    if (current) current.classList.remove("current");
    current = turns.nodes[index] || null;
    if (current) current.classList.add("current");
  };
  const pause = () => {
    clearInterval(timer);
    timer = null;
    play.textContent = "▶ play";
  };
  play.addEventListener("click", () => {
    if (timer) return pause();
    if (index >= steps - 1) show(0);
    play.textContent = "❚❚ pause";
    timer = setInterval(() => (index >= steps - 1 ? pause() : show(index + 1)), count ? 150 : 700);
  });
  // a step the person asked for brings its turn into view (playing leaves the page still)
  const step = (next) => {
    show(next);
    const node = turns.nodes[index];
    if (node) node.scrollIntoView({ block: "nearest" });
  };
  slider.addEventListener("input", () => { pause(); step(Number(slider.value)); });
  const node = el("aside", { class: "player box" },
    el("h3", {}, count ? `Frames (${count})` : "Observations"),
    view,
    el("div", { class: "controls" },
      el("button", { id: `${prefix}player-first`, onclick: () => { pause(); show(0); } }, "|◀"),
      el("button", { id: `${prefix}player-prev`, onclick: () => { pause(); step(index - 1); } },
        "◀"),
      play,
      el("button", { id: `${prefix}player-next`, onclick: () => { pause(); step(index + 1); } },
        "▶|"),
      label),
    slider);
  show(0);
  return { node, stop: pause };
}

function episodeView(record, prefix) {
  const turns = turnList(record.turns);
  const header = [
    el("h2", {}, `${record.env_id} · ${record.task_id}`),
    el("div", { class: "meta" },
      el("span", {}, `run: ${runName(record.run)}`),
      el("span", {}, `agent: ${record.agent || "—"}`),
      el("span", {}, `split: ${record.split || "—"}`),
      el("span", {}, `seed: ${record.seed ?? "—"}`),
      el("span", {}, `turns: ${record.turns.length}`),
      outcomeBadge(record)),
  ];
  if (record.summary) {
    return { node: el("div", {}, header, el("div", { class: "box" },
      el("h3", {}, "Summary (from a results file: no turns recorded)"),
      el("p", {}, "To see every turn, evaluate with --trajectories t.jsonl as well: "
        + "llmgym eval ... --json r.json --trajectories t.jsonl"),
      el("pre", { class: "summary" }, JSON.stringify(record.summary, null, 2)))), stop: null };
  }
  const body = el("div", {},
    el("div", { class: "box" }, el("h3", {}, "Instruction"),
      el("pre", { class: "instruction" }, record.instruction)),
    record.system_prompt ? el("details", { class: "box" }, el("summary", {}, "System prompt"),
      el("pre", {}, record.system_prompt)) : null,
    turns.node,
    outcomeBox(record));
  const play = record.turns.length || record.frames ? player(record, turns, prefix) : null;
  const grid = el("div", { class: play ? "episode" : "episode no-player" }, body,
    play ? play.node : null);
  return { node: el("div", {}, header, grid), stop: play ? play.stop : null };
}

async function showEpisode(id) {
  markNav("nav-list");
  let record;
  try {
    record = await api(`/api/episodes/${encodeURIComponent(id)}`);
  } catch (error) {
    main(el("p", { class: "error" }, error.message));
    return;
  }
  const view = episodeView(record, "");
  main(backButton(),
    view.node);
  stopPlayer = view.stop;
}

// ------------------------------------------------------------------ two runs
const OUTCOME_LABELS = {
  a_only: "A solved, B did not", b_only: "B solved, A did not", both: "both solved",
  neither: "neither solved", missing: "played by one run only",
};

async function showCompare(params) {
  markNav("nav-compare");
  if (RUNS.runs.length < 2) {
    main(el("p", {}, "Give `llmgym view` two runs (two trajectory or results files) to compare."));
    return;
  }
  const a = params.get("a") || "0";
  const b = params.get("b") || "1";
  const outcome = params.get("outcome") || "";
  const offset = Number(params.get("offset") || 0);
  const pick = (id, value) => el("select", { id },
    RUNS.runs.map((r) => el("option", { value: r.id, selected: String(r.id) === value }, r.name)));
  const runA = pick("compare-a", a);
  const runB = pick("compare-b", b);
  const change = () => go("/compare", { a: runA.value, b: runB.value });
  runA.addEventListener("change", change);
  runB.addEventListener("change", change);
  const counts = el("div", { class: "counts", id: "compare-counts" });
  const status = el("div", { class: "pager" });
  const table = el("table", { id: "compare-table" });
  main(el("form", { class: "filters" }, el("label", {}, "run A", runA),
    el("label", {}, "run B", runB)), counts, status, table);
  const query = new URLSearchParams({ a, b, offset, limit: PAGE });
  if (outcome) query.set("outcome", outcome);
  let page;
  try {
    page = await api(`/api/compare?${query}`);
  } catch (error) {
    status.replaceChildren(el("span", { class: "error" }, error.message));
    return;
  }
  counts.replaceChildren(
    el("button", { class: outcome ? "" : "active", onclick: () => go("/compare", { a, b }) },
      "all tasks"),
    ...Object.entries(OUTCOME_LABELS).map(([key, text]) => el("button", {
      "data-outcome": key, class: outcome === key ? "active" : "",
      onclick: () => go("/compare", { a, b, outcome: key }) }, `${text}: ${page.counts[key]}`)));
  const last = offset + page.items.length;
  const move = (delta) => go("/compare", { a, b, outcome, offset: Math.max(0, offset + delta) });
  status.replaceChildren(
    el("button", { disabled: offset === 0, onclick: () => move(-PAGE) }, "‹ prev"),
    el("span", { id: "compare-info" }, page.total ? `${offset + 1}–${last} of ${page.total}`
      : "no tasks"),
    el("button", { disabled: last >= page.total, onclick: () => move(PAGE) }, "next ›"));
  const cell = (e) => (e ? [outcomeBadge(e), ` ${e.turns} turns`] : el("span",
    { class: "badge none" }, "not played"));
  table.replaceChildren(
    el("thead", {}, el("tr", {}, ["environment", "task", `A: ${runName(a)}`, `B: ${runName(b)}`,
      "outcome"].map((h) => el("th", {}, h)))),
    el("tbody", {}, page.items.map((row) => el("tr", {
      "data-task": row.task_id,
      onclick: () => go("/pair", { a: row.a ? row.a.id : "", b: row.b ? row.b.id : "" }) },
      el("td", {}, row.env_id), el("td", {}, row.task_id), el("td", {}, cell(row.a)),
      el("td", {}, cell(row.b)), el("td", {}, OUTCOME_LABELS[row.outcome])))));
}

async function showPair(params) {
  markNav("nav-compare");
  const columns = [];
  const stops = [];
  for (const side of ["a", "b"]) {
    const id = params.get(side);
    const section = el("section", { id: `pair-${side}` }, el("h3", {}, `Run ${side.toUpperCase()}`));
    if (!id) {
      section.append(el("p", { class: "muted" }, "This run did not play the task."));
    } else {
      try {
        const view = episodeView(await api(`/api/episodes/${encodeURIComponent(id)}`), `${side}-`);
        section.append(view.node);
        if (view.stop) stops.push(view.stop);
      } catch (error) {
        section.append(el("p", { class: "error" }, error.message));
      }
    }
    columns.push(section);
  }
  main(backButton(),
    el("div", { class: "pair" }, columns));
  stopPlayer = () => stops.forEach((stop) => stop());
}

// ------------------------------------------------------------------ start
async function render() {
  const { path, params } = route();
  const episode = path.match(/^\/episode\/(\d+)$/);
  if (episode) await showEpisode(episode[1]);
  else if (path === "/compare") await showCompare(params);
  else if (path === "/pair") await showPair(params);
  else await showList(params);
  document.body.dataset.ready = path;
}

async function start() {
  try {
    RUNS = await api("/api/runs");
  } catch (error) {
    main(el("p", { class: "error" }, `cannot load runs: ${error.message}`));
    return;
  }
  document.getElementById("summary").textContent =
    `${RUNS.episodes.toLocaleString("en")} episodes · ${RUNS.runs.length} run(s)`;
  window.addEventListener("hashchange", () => {
    delete document.body.dataset.ready;
    render();
  });
  render();
}

start();
