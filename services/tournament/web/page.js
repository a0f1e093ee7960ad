// The tournament page: renders /state, then every server-sent event of /events (each one the
// whole state), without a reload. Every text goes in with textContent: names are user input.
"use strict";
(function () {
  const page = JSON.parse(document.body.dataset.page);
  const base = "/tournaments/" + encodeURIComponent(page.tournament_id);
  const TOKEN_KEY = "stammtisch-token";
  let state = null;
  let me = null;

  function el(tag, text, cls) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  }
  function $(id) { return document.getElementById(id); }
  function statusName(s) { return String(s || "").replace("TOURNAMENT_STATUS_", "").toLowerCase().replace("_", " "); }
  function seconds(ts) { return ts ? Date.parse(ts) / 1000 : 0; }
  function names() {
    const found = {};
    for (const p of state.tournament.players) found[p.player_id] = p.name;
    return found;
  }

  function renderHeader() {
    const t = state.tournament, s = t.settings;
    $("name").textContent = s.name;
    document.title = s.name + " · Stammtisch";
    const kind = s.format === "TOURNAMENT_FORMAT_KNOCKOUT" ? "knockout" : s.rounds + " rounds";
    $("meta").textContent = s.game + " · " + kind + " · " + s.games_per_round + " game(s) per round · " +
      t.players.filter(p => !p.bot).length + " players";
    const status = $("status");
    status.textContent = statusName(t.status) + (t.awaiting_next_round ? " · waiting for the next round" : "");
    status.dataset.status = statusName(t.status);
    for (const [id, file] of [["export-standings", "standings.csv"], ["export-games", "games.csv"], ["export-json", "results.json"]]) {
      $(id).href = base + "/export/" + file;
    }
  }

  function renderClock() {
    if (!state) return;
    const t = state.tournament, s = t.settings, clock = $("clock");
    if (!clock) return;
    const now = Date.now() / 1000;
    let text = "";
    if (t.status === "TOURNAMENT_STATUS_REGISTRATION" && s.start_at) {
      const left = seconds(s.start_at) - now;
      text = left > 0 ? "starts in " + duration(left) : "starting";
    } else if (t.status === "TOURNAMENT_STATUS_RUNNING" && t.rounds.length) {
      const round = t.rounds[t.rounds.length - 1];
      text = "round " + round.round;
      if (!round.finished && s.round_seconds) {
        const left = seconds(round.started_at) + s.round_seconds - now;
        text += left > 0 ? " · " + duration(left) + " left" : " · time is up";
      }
    }
    clock.textContent = text;
  }
  function duration(sec) {
    sec = Math.max(0, Math.round(sec));
    const h = Math.floor(sec / 3600), m = Math.floor(sec / 60) % 60, s = sec % 60;
    return (h ? h + ":" + String(m).padStart(2, "0") : m) + ":" + String(s).padStart(2, "0");
  }

  function renderStandings() {
    const table = $("standings");
    const tieBreaks = state.tournament.settings.tie_breaks || [];
    const knockout = state.tournament.settings.format === "TOURNAMENT_FORMAT_KNOCKOUT";
    const head = ["#", "Player", "Points"].concat(knockout ? ["Round", "Place"] : [], tieBreaks.map(label), ["Games"]);
    const tr = el("tr");
    for (const h of head) tr.appendChild(el("th", h));
    table.tHead.replaceChildren(tr);
    const rows = state.standings.map(line => {
      const row = el("tr", undefined, line.withdrawn ? "withdrawn" : "");
      row.dataset.playerId = line.player_id;
      const cells = [line.rank, line.name, line.points_exact].concat(
        knockout ? [line.reached_round, line.reached_place] : [],
        tieBreaks.map(name => { const v = (line.tie_breaks || []).find(x => x.name === name); return v ? v.exact : ""; }),
        [line.games]);
      cells.forEach((c, i) => row.appendChild(el("td", c, i === 1 ? "name" : "num")));
      return row;
    });
    table.tBodies[0].replaceChildren(...rows);
  }
  function label(name) { return { game_points: "Game pts", wins: "Wins", best_game: "Best game", opponents_points: "Opp. pts" }[name] || name; }

  function renderRounds() {
    const who = names();
    const rounds = state.tournament.rounds.slice().reverse();
    const games = state.tournament.settings.games_per_round;
    const blocks = rounds.map((round, index) => {
      const box = el("details", undefined, "round");
      box.open = index === 0;
      box.appendChild(el("summary", "Round " + round.round + (round.finished ? " · finished" : " · playing")));
      for (const pair of round.forced_pairs || []) {
        box.appendChild(el("p", "Had to seat together (no seating kept them apart): " +
          (who[pair.player_a] || pair.player_a) + " and " + (who[pair.player_b] || pair.player_b), "notice"));
      }
      const list = el("ul", undefined, "tables");
      for (const table of round.tables) {
        const item = el("li", undefined, "table");
        item.dataset.tableId = table.table_id;
        const title = el("div", undefined, "table-head");
        title.appendChild(el("strong", "Table " + table.table));
        title.appendChild(el("span", " " + table.games_finished + "/" + games + " games ", "meta"));
        const link = el("a", "spectate");
        link.href = base + "/tables/" + encodeURIComponent(table.table_id);
        title.appendChild(link);
        item.appendChild(title);
        item.appendChild(el("div", table.player_ids.map(p => p ? (who[p] || p) : "(bot)").join(" · "), "seated"));
        list.appendChild(item);
      }
      box.appendChild(list);
      return box;
    });
    if (!blocks.length) blocks.push(el("p", "No round seated yet.", "none"));
    $("rounds").replaceChildren(...blocks);
  }

  function renderPlayers() {
    const items = state.tournament.players.map(p => {
      const item = el("li", p.name + (p.bot ? " (bot)" : "") + (p.last_round ? " · withdrawn" : ""));
      item.dataset.playerId = p.player_id;
      const over = ["TOURNAMENT_STATUS_FINISHED", "TOURNAMENT_STATUS_CANCELLED"].includes(state.tournament.status);
      if (me && me.player_id === state.tournament.organizer_id && !p.last_round && !over) {
        const remove = el("button", "Remove", "small danger");
        remove.type = "button";
        remove.dataset.remove = p.player_id;
        item.appendChild(document.createTextNode(" "));
        item.appendChild(remove);
      }
      return item;
    });
    $("players").replaceChildren(...items);
  }

  function renderControls() {
    const controls = $("controls");
    const organizer = me && state && me.player_id === state.tournament.organizer_id;
    controls.hidden = !organizer;
    $("login").hidden = !!organizer;
    if (!organizer) return;
    $("who").textContent = me.name;
    const t = state.tournament, st = t.status;
    const allowed = {
      start: st === "TOURNAMENT_STATUS_REGISTRATION",
      pause: st === "TOURNAMENT_STATUS_RUNNING",
      resume: st === "TOURNAMENT_STATUS_PAUSED",
      next_round: !!t.awaiting_next_round,
      cancel: !["TOURNAMENT_STATUS_FINISHED", "TOURNAMENT_STATUS_CANCELLED"].includes(st),
    };
    for (const button of controls.querySelectorAll("button[data-action]")) {
      button.disabled = !allowed[button.dataset.action];
      button.hidden = button.dataset.action === "next_round" && !t.settings.manual_rounds;
    }
  }

  function renderTable() {
    const who = names();
    const t = state.tournament;
    $("name").textContent = t.settings.name;
    $("status").textContent = statusName(t.status);
    $("back").href = base;
    for (const round of t.rounds) {
      for (const table of round.tables) {
        if (table.table_id !== page.table_id) continue;
        $("meta").textContent = "Round " + round.round + " · table " + table.table + " · " +
          table.games_finished + "/" + t.settings.games_per_round + " games";
        $("seats").replaceChildren(...table.player_ids.map(p => el("li", p ? (who[p] || p) : "(bot)")));
      }
    }
    $("watch-command").textContent = "LobbyService.WatchTable table_id=" + page.table_id;
    fetch(base + "/export/results.json").then(r => r.json()).then(doc => {
      const mine = doc.games.filter(g => g.table_id === page.table_id);
      const head = el("tr");
      ["Game"].concat((mine[0] ? mine[0].seats : []).map(s => s.name || "(bot)")).forEach(h => head.appendChild(el("th", h)));
      $("games").tHead.replaceChildren(head);
      $("games").tBodies[0].replaceChildren(...mine.map(g => {
        const row = el("tr");
        row.appendChild(el("td", g.game, "num"));
        for (const s of g.seats) row.appendChild(el("td", s.total + " (" + s.points + ")", "num"));
        return row;
      }));
    }).catch(() => {});
  }

  function render() {
    if (page.table_id) return renderTable();
    renderHeader(); renderClock(); renderStandings(); renderRounds(); renderPlayers(); renderControls();
    document.body.dataset.seq = state.seq || 0;
  }

  function token() { return sessionStorage.getItem(TOKEN_KEY); }
  async function login(value) {
    const response = await fetch("/api/me", { headers: { Authorization: "Bearer " + value } });
    if (!response.ok) { sessionStorage.removeItem(TOKEN_KEY); me = null; return false; }
    sessionStorage.setItem(TOKEN_KEY, value);
    me = await response.json();
    if (state) render();
    return true;
  }
  async function control(action, body) {
    const result = $("control-result");
    result.textContent = "…";
    const response = await fetch(base + "/control/" + action, {
      method: "POST", headers: { Authorization: "Bearer " + token(), "Content-Type": "application/json" },
      body: JSON.stringify(body || {}) });
    const reply = await response.json();
    if (response.ok) { state = Object.assign(reply, { seq: state.seq }); render(); result.textContent = action.replace("_", " ") + ": done"; }
    else result.textContent = action.replace("_", " ") + " refused: " + reply.code + ": " + reply.message;
  }

  function follow() {
    const source = new EventSource(base + "/events");
    source.addEventListener("state", event => { state = JSON.parse(event.data); render(); $("live").dataset.on = "1"; });
    source.onerror = () => { $("live").dataset.on = "0"; };
  }

  async function main() {
    // The CLI hands the organizer's token over in the #fragment (never sent to a server): keep it
    // in this tab only and take it out of the address bar.
    const hash = new URLSearchParams(location.hash.slice(1));
    if (hash.get("token")) {
      sessionStorage.setItem(TOKEN_KEY, hash.get("token"));
      history.replaceState(null, "", location.pathname + location.search);
    }
    const response = await fetch(base + "/state");
    state = await response.json();
    render();
    follow();
    if (page.table_id) return;
    setInterval(renderClock, 1000);
    if (token()) await login(token());
    $("login-form").addEventListener("submit", async event => {
      event.preventDefault();
      const ok = await login($("token").value.trim());
      $("token").value = "";
      if (!ok) { $("notice").hidden = false; $("notice").textContent = "That token was refused."; }
    });
    $("logout").addEventListener("click", () => { sessionStorage.removeItem(TOKEN_KEY); me = null; render(); });
    $("controls").addEventListener("click", event => {
      const action = event.target.dataset && event.target.dataset.action;
      if (action && (action !== "cancel" || confirm("Cancel the tournament for good?"))) control(action);
    });
    $("players").addEventListener("click", event => {
      const player = event.target.dataset && event.target.dataset.remove;
      if (player && confirm("Remove this player?")) control("remove", { player_id: player });
    });
  }
  main();
})();
