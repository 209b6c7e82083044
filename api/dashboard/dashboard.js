// recur's jobs dashboard. Everything it shows comes from the API and goes
// into the page as text (textContent, attributes), never as markup.
'use strict';

(() => {
  const API_VERSION = '2016-03-01';
  const TOKEN_KEY = 'recur.dashboard.token';
  const HISTORY_ROWS = 40; // history rows read per job: about 20 to 40 runs
  const FAILURE_ROWS = 10; // failures read per job that has any
  const TIMELINE_RUNS = 20;
  const MAX_PAGES = 20; // nextLinks followed per list
  const RUN_WAIT_MS = 60000; // how long run now waits for its history row
  const $ = (id) => document.getElementById(id);

  let loading = false;
  let timer = null;
  // busy counts the actions in flight: the automatic refresh waits for them.
  let busy = 0;

  // ---- the token: in this tab's sessionStorage at most ----

  function getToken() {
    try { return sessionStorage.getItem(TOKEN_KEY) || ''; } catch { return ''; }
  }

  function setToken(value) {
    try {
      if (value) sessionStorage.setItem(TOKEN_KEY, value); else sessionStorage.removeItem(TOKEN_KEY);
    } catch { /* storage off: the token cannot be kept */ }
    showTokenState();
  }

  function showTokenState() {
    $('token-state').textContent = getToken() ? 'A token is set for this tab.' : 'No token set.';
  }

  // ---- the API ----

  class APIError extends Error {
    constructor(status, body) {
      const e = body && body.error;
      super(e && e.message ? e.message : `the API answered ${status}`);
      this.status = status;
      this.code = e && e.code;
      this.target = e && e.target;
    }
  }

  async function call(method, url, body, extra) {
    const headers = { Accept: 'application/json', ...extra };
    const token = getToken();
    if (token) headers.Authorization = 'Bearer ' + token;
    const init = { method, headers, credentials: 'omit', cache: 'no-store', redirect: 'error' };
    // The API wants Content-Type: application/json on every request a
    // browser sends with side effects, with a body or not (run, enable).
    if (method !== 'GET') headers['Content-Type'] = 'application/json';
    if (body !== undefined) init.body = JSON.stringify(body);
    const resp = await fetch(url, init);
    const text = await resp.text();
    let data = null;
    try { data = text ? JSON.parse(text) : null; } catch { data = null; }
    if (!resp.ok) throw new APIError(resp.status, data);
    return data;
  }

  const seg = encodeURIComponent;

  function armURL(path, query) {
    const q = new URLSearchParams(query || {});
    q.set('api-version', API_VERSION);
    return path + '?' + q.toString();
  }

  // list reads every page of an ARM list, following nextLinks on this
  // origin only.
  async function list(url) {
    const out = [];
    for (let page = 0; url && page < MAX_PAGES; page++) {
      const data = await call('GET', url);
      out.push(...((data && data.value) || []));
      url = null;
      if (data && data.nextLink) {
        const next = new URL(data.nextLink, location.href);
        if (next.origin === location.origin) url = next.pathname + next.search;
      }
    }
    return out;
  }

  // inTurn maps items through the async fn, a few at a time, keeping
  // their order.
  async function inTurn(items, fn, width = 6) {
    const out = new Array(items.length);
    let next = 0;
    const worker = async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]);
      }
    };
    await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
    return out;
  }

  // parts reads subscription, resource group, collection and job from an
  // ARM resource ID.
  function parts(id) {
    const p = String(id || '').split('/');
    const at = (word) => {
      const i = p.findIndex((s) => s.toLowerCase() === word.toLowerCase());
      return i >= 0 && i + 1 < p.length ? p[i + 1] : '';
    };
    return { subscription: at('subscriptions'), resourceGroup: at('resourceGroups'),
      collection: at('jobCollections'), job: at('jobs') };
  }

  function collectionPath(k) {
    return `/subscriptions/${seg(k.subscription)}/resourceGroups/${seg(k.resourceGroup)}` +
      `/providers/Microsoft.Scheduler/jobCollections/${seg(k.collection)}`;
  }

  // ---- small DOM helpers: text only ----

  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (v === undefined || v === null) continue;
      if (k === 'className') node.className = v;
      else if (k === 'text') node.textContent = v;
      else if (k.startsWith('data-') || k.startsWith('aria-') || k === 'title' || k === 'datetime' || k === 'tabindex') node.setAttribute(k, String(v));
      else node[k] = v;
    }
    for (const c of children) node.append(c); // strings become text nodes
    return node;
  }

  // ---- times: in a job's own zone beside UTC ----

  // browserZone is the IANA name the browser knows name by, or null.
  function browserZone(name) {
    try { return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone; } catch { return null; }
  }

  const zones = new Map(); // a recurrence's timeZone -> the zone its times show in, '' for UTC

  // zoneOf resolves a job's recurrence.timeZone to a zone the browser
  // knows: an IANA name as it is, a Windows name ("W. Europe Standard
  // Time") through the API, whose preview of the job names the IANA zone
  // it reads the schedule in. '' (UTC alone) when there is none.
  async function zoneOf(name, jobPath) {
    name = String(name || '').trim();
    if (!name || name.toUpperCase() === 'UTC') return '';
    if (zones.has(name)) return zones.get(name);
    let zone = browserZone(name);
    if (zone === null) {
      const k = parts(jobPath);
      const data = await call('GET', `/recur/v1/subscriptions/${seg(k.subscription)}/resourceGroups/${seg(k.resourceGroup)}` +
        `/jobCollections/${seg(k.collection)}/jobs/${seg(k.job)}/preview?count=1`).catch(() => null);
      if (!data) return ''; // asked again at the next refresh
      zone = (data.timeZone && browserZone(data.timeZone)) || '';
    }
    zones.set(name, zone);
    return zone;
  }

  const wallFormats = new Map();

  // wall is the date and time an instant shows in zone.
  function wall(d, zone) {
    let f = wallFormats.get(zone);
    if (!f) {
      f = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: '2-digit',
        day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
      wallFormats.set(zone, f);
    }
    const p = Object.fromEntries(f.formatToParts(d).map((x) => [x.type, x.value]));
    return { date: `${p.year}-${p.month}-${p.day}`, hm: `${p.hour}:${p.minute}`, s: p.second };
  }

  // when says an instant in zone beside UTC, "2026-11-27 02:00 Europe/Berlin
  // (01:00 UTC)", with the UTC date when it is another day and seconds
  // when there are any; "2026-11-27 01:00 UTC" without a zone.
  function when(iso, zone) {
    const d = new Date(iso);
    if (!iso || Number.isNaN(d.getTime())) return String(iso || '');
    const u = d.toISOString();
    const secs = d.getUTCSeconds() !== 0;
    const utc = { date: u.slice(0, 10), time: u.slice(11, secs ? 19 : 16) };
    if (!zone) return `${utc.date} ${utc.time} UTC`;
    const w = wall(d, zone);
    return `${w.date} ${secs ? w.hm + ':' + w.s : w.hm} ${zone} (${w.date === utc.date ? '' : utc.date + ' '}${utc.time} UTC)`;
  }

  // timeEl is a <time> saying when(iso, zone); a line may break before
  // the UTC part only.
  function timeEl(iso, zone, className) {
    const text = when(iso, zone);
    const cut = zone ? text.lastIndexOf(' (') : -1;
    if (cut < 0) return el('time', { datetime: iso, className, text });
    return el('time', { datetime: iso, className: [className, 'zoned'].filter(Boolean).join(' ') },
      el('span', { text: text.slice(0, cut) }), ' ', el('span', { text: text.slice(cut + 1) }));
  }

  function relative(iso) {
    const ms = new Date(iso).getTime() - Date.now();
    if (Number.isNaN(ms)) return '';
    const abs = Math.abs(ms);
    const unit = abs < 90e3 ? [Math.round(abs / 1e3), 's'] : abs < 90 * 60e3 ? [Math.round(abs / 60e3), 'min']
      : abs < 36 * 3600e3 ? [Math.round(abs / 3600e3), 'h'] : [Math.round(abs / 86400e3), 'd'];
    return ms >= 0 ? `in ${unit[0]} ${unit[1]}` : `${unit[0]} ${unit[1]} ago`;
  }

  function timeCell(iso, zone) {
    if (!iso) return el('td', { className: 'none' }, el('span', { 'aria-label': 'none', text: '–' }));
    return el('td', {}, timeEl(iso, zone, 'abs'),
      el('span', { className: 'rel', text: ' ' + relative(iso) }));
  }

  function statusClass(status) {
    const s = String(status || '').toLowerCase();
    return ['completed', 'failed', 'postponed'].includes(s) ? s : 'other';
  }

  const SYMBOL = { completed: '✓', failed: '✗', postponed: '–', other: '?' };

  // ---- health: the status's recur members, as the API's unhealthy filter reads them ----

  // The API's unhealthy filter (api/jobfilter.go): failing, its last
  // scheduled run a minute late or more, or an occurrence postponed or
  // missed in the last 24 hours.
  const UNHEALTHY_LATENESS_MS = 60e3;
  const UNHEALTHY_WINDOW_MS = 24 * 3600e3;

  // durationMs reads an ISO 8601 duration ("PT0.042S", "PT1M30S",
  // "P1DT2H") as milliseconds; NaN when it is not one.
  function durationMs(iso) {
    const m = /^(-)?P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/.exec(String(iso || ''));
    if (!m || iso === 'P' || iso === 'PT') return NaN;
    const ms = ((+(m[2] || 0) * 24 + +(m[3] || 0)) * 60 + +(m[4] || 0)) * 60e3 + Math.round(+(m[5] || 0) * 1e3);
    return m[1] ? -ms : ms;
  }

  // spanText says a duration shortly: "42 ms", "4.2 s", "2m 5s", "1h 2m", "1d 2h".
  function spanText(ms) {
    const sign = ms < 0 ? '-' : '';
    ms = Math.abs(ms);
    if (ms < 1e3) return `${sign}${Math.round(ms)} ms`;
    if (ms < 60e3) return `${sign}${(Math.round(ms / 100) / 10).toString()} s`;
    const s = Math.round(ms / 1e3);
    const [d, h, m, sec] = [Math.floor(s / 86400), Math.floor(s / 3600) % 24, Math.floor(s / 60) % 60, s % 60];
    const out = d ? [`${d}d`, h ? `${h}h` : ''] : h ? [`${h}h`, m ? `${m}m` : ''] : [`${m}m`, sec ? `${sec}s` : ''];
    return sign + out.filter(Boolean).join(' ');
  }

  // health is what a job's status says of its health: the reasons it is
  // unhealthy, in the order the page sorts by (a failure streak, then
  // lateness, then a recent miss), and its rank among them (3 healthy).
  function health(job, now = Date.now()) {
    const s = (job.properties && job.properties.status) || {};
    const failures = Number(s.consecutiveFailures || 0);
    const late = durationMs(s.lastLateness);
    const missedAt = s.lastMissedTime ? new Date(s.lastMissedTime).getTime() : NaN;
    const h = {
      failing: failures > 0, failures,
      late: late >= UNHEALTHY_LATENESS_MS, lateness: late,
      missed: missedAt >= now - UNHEALTHY_WINDOW_MS, missedAt,
    };
    h.rank = h.failing ? 0 : h.late ? 1 : h.missed ? 2 : 3;
    return h;
  }

  // byHealth orders entries: the unhealthy first (the longest failure
  // streaks, then the latest runs, then the most recent misses), then the
  // rest as the API listed them. An entry is unhealthy when the API's
  // unhealthy filter lists it or its status meets the same rule (the
  // filter's search attributes trail a job's status by a moment).
  function byHealth(entries, unhealthy) {
    const key = (e) => {
      const h = health(e.job);
      const listed = e.listed = Boolean(unhealthy && unhealthy.has(String(e.job.id).toLowerCase()));
      const rank = h.rank === 3 && listed ? 2.5 : h.rank;
      const within = rank === 0 ? -h.failures : rank === 1 ? -h.lateness : rank === 2 ? -h.missedAt : 0;
      return [rank, Number.isNaN(within) ? 0 : within];
    };
    return entries.map((e, i) => [key(e), i, e])
      .sort((a, b) => a[0][0] - b[0][0] || a[0][1] - b[0][1] || a[1] - b[1]).map((x) => x[2]);
  }

  // healthCell says a job's health in a few words, its times in the
  // job's zone: "✗ 3 in a row, last success ...", "late 2m", "missed 4
  // (last ...)", or "✓ healthy".
  function healthCell(job, zone, listed) {
    const s = (job.properties && job.properties.status) || {};
    const h = health(job);
    const td = el('td', { className: 'health' });
    const line = (cls, ...parts) => td.append(el('span', { className: `health-line ${cls}` }, ...parts));
    if (h.failing) {
      line('health-failing', `✗ ${h.failures} in a row`,
        ...(s.lastSuccessTime ? [', last success ', timeEl(s.lastSuccessTime, zone)] : [', never succeeded']));
    }
    if (h.late) line('health-late', `late ${spanText(h.lateness)}`);
    if (h.missed) {
      const counts = [s.missedCount ? `missed ${s.missedCount}` : '', s.postponedCount ? `postponed ${s.postponedCount}` : '']
        .filter(Boolean).join(', ') || 'missed';
      line('health-missed', `${counts} (last `, timeEl(s.lastMissedTime, zone), ')');
    }
    if (h.rank === 3) {
      line(listed ? 'health-unhealthy' : 'health-ok', listed ? '! unhealthy (the API says so)' : '✓ healthy');
      if (!Number.isNaN(h.lateness)) td.append(el('span', { className: 'hint health-line', text: `last run ${spanText(h.lateness)} late` }));
    }
    return td;
  }

  // lateClass buckets a run's lateness for the timeline's mark: under a
  // second, a second, a minute, ten minutes, an hour or more.
  function lateClass(ms) {
    if (Number.isNaN(ms)) return '';
    return 'late-' + [1e3, 60e3, 600e3, 3600e3].filter((x) => ms >= x).length;
  }

  function setStatus(text) { $('status').textContent = text; }

  // errorText says what went wrong as the API put it: status, code,
  // message and the field at fault.
  function errorText(err) {
    return [err.status ? `Error ${err.status}` : 'Error', err.code].filter(Boolean).join(' ') + ': ' + err.message +
      (err.target ? ` (${err.target})` : '');
  }

  function showError(box, err) {
    const node = $(box);
    if (!err) { node.hidden = true; node.textContent = ''; return; }
    node.hidden = false;
    const text = errorText(err);
    const head = text.indexOf(':');
    node.replaceChildren(el('strong', { text: text.slice(0, head) }), text.slice(head));
  }

  function needToken(err) {
    const unauthenticated = err && err.status === 401;
    $('auth').classList.toggle('needed', unauthenticated);
    if (unauthenticated) {
      $('auth-hint').textContent = getToken()
        ? 'The API refused the token of this tab. Paste a valid bearer token.'
        : 'The API needs a bearer token. Paste one to see the jobs.';
      $('token').focus();
    }
    return unauthenticated;
  }

  // ---- jobs ----

  // runsOf groups history rows (newest first) into runs, oldest first:
  // a run's status is its main action's.
  function runsOf(rows) {
    const runs = [];
    const byTime = new Map();
    for (const row of rows) {
      const p = row.properties || {};
      const key = p.expectedExecutionTime + '|' + p.repeatCount;
      let run = byTime.get(key);
      if (!run) {
        run = { time: p.expectedExecutionTime, rows: [] };
        byTime.set(key, run);
        runs.push(run);
      }
      run.rows.push(p);
    }
    for (const run of runs) {
      const main = run.rows.find((r) => r.actionName === 'MainAction') || run.rows[0];
      run.status = main.status;
      run.message = main.message || '';
      run.start = main.startTime || run.time;
      run.lateness = main.lateness || ''; // a scheduled run's main action row has it
    }
    return runs.reverse();
  }

  function timeline(runs, zone) {
    const ol = el('ol', { className: 'timeline', 'aria-label': 'Recent runs, oldest first; a taller mark below a run, a later start' });
    for (const run of runs.slice(-TIMELINE_RUNS)) {
      const cls = statusClass(run.status);
      const late = durationMs(run.lateness);
      const label = `${run.status} at ${when(run.start, zone)}` +
        (Number.isNaN(late) ? '' : `, started ${spanText(late)} late`) + (run.message ? `: ${run.message}` : '');
      ol.append(el('li', { className: ['run', `run-${cls}`, lateClass(late)].filter(Boolean).join(' '), title: label,
        tabindex: 0, 'data-status': run.status, 'data-lateness': run.lateness || undefined },
        el('span', { 'aria-hidden': 'true', text: SYMBOL[cls] }), el('span', { className: 'visually-hidden', text: label })));
    }
    if (!runs.length) ol.append(el('li', { className: 'hint', text: 'no runs yet' }));
    return ol;
  }

  function historyDetails(rows, job, zone) {
    const details = el('details', { className: 'history' }, el('summary', { text: `History of ${job} (${rows.length} rows)` }));
    if (!rows.length) return details;
    const body = el('tbody');
    for (const row of rows) {
      const p = row.properties || {};
      body.append(el('tr', { className: `row-${statusClass(p.status)}` },
        el('td', {}, timeEl(p.expectedExecutionTime, zone)),
        el('td', { text: p.actionName || '' }),
        el('td', {}, el('span', { className: `badge status-${statusClass(p.status)}`, text: p.status || '' })),
        el('td', { text: String(p.retryCount ?? '') }),
        el('td', { text: p.lateness ? spanText(durationMs(p.lateness)) : '' }),
        el('td', { className: 'message', text: p.message || '' })));
    }
    details.append(el('table', { className: 'rows' },
      el('thead', {}, el('tr', {}, ...['Planned', 'Action', 'Status', 'Retries', 'Late', 'Message']
        .map((h) => el('th', { scope: 'col', text: h })))), body));
    return details;
  }

  // failuresDetails lists the job's failed runs, newest first, each with
  // its last answer and a Run again button.
  function failuresDetails(entry, job, zone) {
    const failures = entry.failures || [];
    const details = el('details', { className: 'failures' }, el('summary', { text: `Failed runs of ${job} (${failures.length})` }));
    if (!failures.length) {
      details.hidden = true;
      return details;
    }
    const body = el('tbody');
    for (const f of failures) {
      const p = f.properties || {};
      const id = String(f.name || '').split('/').pop();
      const again = el('button', { type: 'button', className: 'run-again', text: 'Run again',
        'aria-label': `Run again the ${p.kind || ''} run of ${job} planned ${when(p.expectedExecutionTime, zone)}` });
      again.addEventListener('click', () => { if (!acting.has(entry.path)) rerun(entry, id, p.expectedExecutionTime); });
      body.append(el('tr', { 'data-failure': id },
        el('td', {}, timeEl(p.expectedExecutionTime, zone)),
        el('td', { text: p.kind || '' }),
        el('td', { text: (p.response || {}).status || '' }),
        el('td', { text: String(p.attempts ?? '') }),
        el('td', { className: 'failure-message', text: p.message || '' }),
        el('td', {}, again)));
    }
    // Not the history's classes: what reads the history's rows reads
    // them alone.
    details.append(el('table', { className: 'failed-runs' },
      el('thead', {}, el('tr', {}, ...['Planned', 'Kind', 'Answer', 'Attempts', 'Message', '']
        .map((h) => el('th', { scope: 'col', text: h })))), body));
    return details;
  }

  // ---- each job shown: its row, kept up to date by its actions ----

  // shown holds, by job path, what the page shows of each job: the job as
  // the API last gave it (its etag the revision an action expects), its
  // newest history rows, the zone its times show in, and its two rows.
  let shown = new Map();
  // outcomes holds, by job path, what the last action on it did: it stays
  // through refreshes.
  const outcomes = new Map();
  // acting holds the paths of the jobs an action is running on: their
  // buttons wait (aria-disabled, so that the focus stays on them).
  const acting = new Set();

  async function historyOf(path) {
    const data = await call('GET', armURL(path + '/history', { $top: HISTORY_ROWS }));
    return (data && data.value) || [];
  }

  // failuresOf reads the newest failed runs of a job that has faulted
  // runs; none for the others, which have none to read.
  async function failuresOf(path, job) {
    if (!(((job.properties || {}).status || {}).faultedCount > 0)) return [];
    const data = await call('GET', armURL(path + '/failures', { $top: FAILURE_ROWS })).catch(() => null);
    return (data && data.value) || [];
  }

  async function newEntry(path, job, rows) {
    const p = job.properties || {};
    const [zone, failures] = await Promise.all([zoneOf(p.recurrence && p.recurrence.timeZone, path), failuresOf(path, job)]);
    return { path, job, rows, failures, zone, nodes: [] };
  }

  function jobRow(entry) {
    const { job, rows, zone, listed } = entry;
    const k = parts(job.id);
    const p = job.properties || {};
    const s = p.status || {};
    const action = p.action || {};
    const name = el('th', { scope: 'row' }, el('span', { className: 'job-name', text: k.job }),
      el('span', { className: 'hint', text: ' ' + (action.type || '') }),
      entry.across ? el('span', { className: 'hint job-where', text: ` in ${k.resourceGroup} / ${k.collection}` }) : '');
    const h = health(job);
    const rank = h.rank === 3 && listed ? 2.5 : h.rank;
    const row = el('tr', { 'data-job': k.job, 'data-collection-of': k.collection,
      'data-health': rank === 2.5 ? 'unhealthy' : ['failing', 'late', 'missed', 'healthy'][rank], className: 'job' },
      name,
      el('td', {}, el('span', { className: `badge state state-${String(p.state || '').toLowerCase()}`, text: p.state || '' }),
        p.stateReason ? el('span', { className: 'hint state-reason', text: ' ' + p.stateReason }) : ''),
      timeCell(s.nextExecutionTime, zone),
      timeCell(s.lastExecutionTime, zone),
      el('td', { className: 'counts', text: `${s.executionCount ?? 0} / ${s.failureCount ?? 0} / ${s.faultedCount ?? 0}` }),
      healthCell(job, zone, listed),
      el('td', { className: 'runs' }, timeline(runsOf(rows), zone)),
      actionsCell(entry, k.job, String(p.state || '').toLowerCase()));
    // The history gets a row of its own, the table's full width.
    const history = el('tr', { 'data-history-of': k.job, className: 'history-row' },
      el('td', { colSpan: 8 }, historyDetails(rows, k.job, zone), failuresDetails(entry, k.job, zone)));
    return [row, history];
  }

  // render puts the entry's rows in the page, in place of those it had,
  // keeping its history open and the focus in it if they were.
  function render(entry) {
    const [oldRow, oldHistory] = entry.nodes;
    const nodes = jobRow(entry);
    if (oldHistory) {
      for (const cls of ['history', 'failures']) {
        nodes[1].querySelector('details.' + cls).open = oldHistory.querySelector('details.' + cls).open;
      }
    }
    const focused = oldRow && oldRow.contains(document.activeElement);
    if (oldRow) {
      oldRow.replaceWith(nodes[0]);
      oldHistory.replaceWith(nodes[1]);
    }
    entry.nodes = nodes;
    if (focused) nodes[0].querySelector('.actions button').focus();
    return nodes;
  }

  // refreshJob reads one job and its history again (GET answers a write
  // at once, where the collection's list lags) and shows them.
  async function refreshJob(path) {
    const entry = shown.get(path);
    if (!entry) return null;
    try {
      const [job, rows] = await Promise.all([call('GET', armURL(path)), historyOf(path)]);
      Object.assign(entry, await newEntry(path, job, rows), { nodes: entry.nodes, listed: entry.listed, across: entry.across });
    } catch (err) {
      if (err.status === 404) {
        entry.gone = true;
        setOutcome(path, 'This job no longer exists. ' + errorText(err), 'error');
      }
      needToken(err);
      return entry;
    }
    render(entry);
    return entry;
  }

  // ---- actions: run now, disable with a reason, enable ----

  function setOutcome(path, text, kind) {
    outcomes.set(path, { text, kind });
    const entry = shown.get(path);
    const row = entry && entry.nodes[0];
    if (row) {
      const node = row.querySelector('.outcome');
      node.textContent = text;
      node.dataset.kind = kind;
      markButtons(row.querySelector('.buttons'), entry);
    }
    if (kind !== 'pending') setStatus(`${parts(path).job}: ${text}`);
  }

  // markButtons makes a job's buttons wait while an action runs on it,
  // and ends them once it is gone.
  function markButtons(buttons, entry) {
    for (const b of buttons.querySelectorAll('button')) {
      b.disabled = Boolean(entry.gone);
      b.setAttribute('aria-disabled', String(acting.has(entry.path)));
    }
  }

  function actionsCell(entry, name, state) {
    const td = el('td', { className: 'actions' });
    const buttons = el('div', { className: 'buttons' });
    const button = (text, cls, onClick) => {
      const b = el('button', { type: 'button', className: cls, text, 'aria-label': `${text} ${name}` });
      b.addEventListener('click', () => { if (!acting.has(entry.path)) onClick(); });
      buttons.append(b);
    };
    button('Run now', 'run-now', () => confirmRun(entry, td, name));
    if (state === 'enabled') button('Disable…', 'disable', () => askReason(entry, td, name));
    if (state === 'disabled' || state === 'faulted') button('Enable', 'enable', () => enable(entry));
    const done = outcomes.get(entry.path) || { text: '', kind: '' };
    td.append(buttons, el('p', { className: 'outcome', text: done.text, 'data-kind': done.kind }));
    markButtons(buttons, entry);
    return td;
  }

  // ask shows a small form in the job's actions cell, in place of its
  // buttons, to confirm an action there rather than in a popup; Cancel or
  // Escape puts the buttons back.
  function ask(td, fields, label, onConfirm) {
    const buttons = td.querySelector('.buttons');
    const cancel = el('button', { type: 'button', className: 'cancel', text: 'Cancel' });
    const form = el('form', { className: 'confirm' }, ...fields,
      el('span', { className: 'confirm-buttons' }, el('button', { type: 'submit', className: 'confirm-action', text: label }), cancel));
    const close = () => { buttons.hidden = false; buttons.querySelector('button').focus(); form.remove(); };
    cancel.addEventListener('click', close);
    form.addEventListener('keydown', (e) => { if (e.key === 'Escape') close(); });
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const values = Object.fromEntries(new FormData(form));
      close();
      onConfirm(values);
    });
    buttons.hidden = true;
    td.insertBefore(form, buttons);
    (form.querySelector('input') || form.querySelector('.confirm-action')).focus();
  }

  function confirmRun(entry, td, name) {
    ask(td, [el('span', { className: 'question', text: `Run ${name} now? Its action is called at once.` })],
      'Run now', () => runNow(entry));
  }

  function askReason(entry, td, name) {
    const id = 'reason-' + Math.random().toString(36).slice(2);
    ask(td, [el('label', { htmlFor: id, text: `Why disable ${name}?` }),
      el('input', { id, name: 'reason', type: 'text', className: 'reason', required: true, maxLength: 1024,
        autocomplete: 'off', placeholder: 'at most 1024 characters' })],
    'Disable', (v) => setState(entry, 'Disabled', v.reason.trim()));
  }

  // act runs one action on a job, shows its outcome and the job as it is
  // afterwards. A 412 says someone changed the job since the page read it:
  // nothing was written, and the row now shows their change.
  async function act(path, doing, fn) {
    busy++;
    acting.add(path);
    setOutcome(path, doing, 'pending');
    try {
      setOutcome(path, await fn(), 'ok');
    } catch (err) {
      needToken(err);
      const changed = err.status === 412 ? 'The job changed since this page read it, and nothing was written: ' +
        'its row now shows it as it is. ' : '';
      setOutcome(path, changed + errorText(err), 'error');
    } finally {
      acting.delete(path);
      const entry = shown.get(path);
      if (entry && entry.nodes[0]) markButtons(entry.nodes[0].querySelector('.buttons'), entry);
      await refreshJob(path);
      busy--;
      document.body.dataset.acted = String(Number(document.body.dataset.acted || 0) + 1);
    }
  }

  // ifMatch makes a write apply only to the revision the page shows.
  function ifMatch(entry) { return entry.job.etag ? { 'If-Match': entry.job.etag } : {}; }

  function setState(entry, state, reason) {
    const properties = state === 'Disabled' ? { state, stateReason: reason } : { state };
    const name = parts(entry.path).job;
    return act(entry.path, state === 'Disabled' ? `Disabling ${name}…` : `Enabling ${name}…`, async () => {
      const job = await call('PATCH', armURL(entry.path), { properties }, ifMatch(shown.get(entry.path) || entry));
      return `${state === 'Disabled' ? 'Disabled' : 'Enabled'}; its state is ${(job && job.properties && job.properties.state) || '?'}.`;
    });
  }

  const enable = (entry) => setState(entry, 'Enabled');

  // runNow runs the job once and waits, a minute at most, for the run's
  // history row, which comes when the run ends.
  function runNow(entry) {
    const path = entry.path;
    const name = parts(path).job;
    return act(path, `Starting a run of ${name}…`, async () => {
      const before = shown.get(path) || entry;
      const count = (before.job.properties.status || {}).executionCount ?? 0;
      const newest = before.rows.length ? JSON.stringify(before.rows[0]) : '';
      await call('POST', armURL(path + '/run'));
      setOutcome(path, `The run of ${name} started; waiting for its history row…`, 'pending');
      const deadline = Date.now() + RUN_WAIT_MS;
      while (Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 1000));
        const entry = await refreshJob(path);
        if (!entry || entry.gone) throw Object.assign(new Error(`${name} no longer exists`), { status: 404 });
        const ran = ((entry.job.properties.status || {}).executionCount ?? 0) > count;
        if (ran && entry.rows.length && JSON.stringify(entry.rows[0]) !== newest) {
          const run = runsOf(entry.rows).at(-1);
          return `Ran: ${run.status} at ${when(run.start, entry.zone)}.`;
        }
      }
      return `The run of ${name} started; its history row has not come yet: refresh later.`;
    });
  }

  // rerun queues a failed run of the job to run again, as it ran; the
  // job starts it as a backfill occurrence, once a slot is free.
  function rerun(entry, id, planned) {
    const path = entry.path;
    const name = parts(path).job;
    return act(path, `Queuing the run of ${name} planned ${when(planned, entry.zone)} to run again…`, async () => {
      await call('POST', armURL(path + '/failures/' + seg(id) + '/run'));
      return `The run of ${name} planned ${when(planned, entry.zone)} is queued to run again.`;
    });
  }

  async function collectionSection(coll, fresh) {
    const k = parts(coll.id);
    const p = coll.properties || {};
    const node = $('collection-template').content.firstElementChild.cloneNode(true);
    node.setAttribute('data-collection', k.collection);
    node.setAttribute('data-resource-group', k.resourceGroup);
    node.querySelector('.name').textContent = k.collection;
    const state = node.querySelector('.state');
    state.textContent = p.state || '';
    state.classList.add('state-' + String(p.state || '').toLowerCase());
    const quota = p.quota || {};
    node.querySelector('.meta').textContent = [`resource group ${k.resourceGroup}`,
      coll.location ? `location ${coll.location}` : '', p.sku ? `sku ${p.sku.name}` : '',
      quota.maxJobCount ? `at most ${quota.maxJobCount} jobs` : ''].filter(Boolean).join(' · ');
    node.querySelector('caption').textContent = `Jobs of ${k.collection}`;
    const path = collectionPath(k);
    // The collection's jobs, and those of them the API's unhealthy filter
    // lists, which come first.
    const [jobs, unhealthy] = await Promise.all([list(armURL(path + '/jobs')),
      list(armURL(path + '/jobs', { $filter: 'unhealthy' })).catch(() => [])]);
    await fillJobs(node, jobs, unhealthy, fresh, false);
    return node;
  }

  // fillJobs puts the jobs in the section's table, the unhealthy first,
  // each with the first page of its history: its newest rows.
  async function fillJobs(node, jobs, unhealthy, fresh, across) {
    const entries = await inTurn(jobs, async (job) => {
      const k = parts(job.id);
      const jobPath = `${collectionPath(k)}/jobs/${seg(k.job)}`;
      return Object.assign(await newEntry(jobPath, job, await historyOf(jobPath).catch(() => [])), { across });
    });
    const tbody = node.querySelector('tbody');
    for (const entry of byHealth(entries, new Set(unhealthy.map((j) => String(j.id).toLowerCase())))) {
      fresh.set(entry.path, entry);
      tbody.append(...render(entry));
    }
    if (!jobs.length) {
      node.querySelector('table').hidden = true;
      node.querySelector('.no-jobs').hidden = false;
    }
  }

  // unhealthySection lists the jobs of every collection of the
  // subscription that the API's unhealthy filter returns.
  async function unhealthySection(sub, fresh) {
    const node = $('collection-template').content.firstElementChild.cloneNode(true);
    node.setAttribute('data-view', 'unhealthy');
    node.querySelector('.collection-title').replaceChildren(el('span', { className: 'view-name', text: `Unhealthy jobs of ${sub}` }));
    node.querySelector('.meta').textContent = 'Failing, a minute late or more, or an occurrence postponed or missed in ' +
      "the last 24 hours, in every collection (the API's unhealthy filter).";
    node.querySelector('caption').textContent = `Unhealthy jobs of ${sub}`;
    node.querySelector('.no-jobs').textContent = `No job of ${sub} is unhealthy.`;
    const jobs = await list(armURL(`/recur/v1/subscriptions/${seg(sub)}/jobs`, { $filter: 'unhealthy' }));
    await fillJobs(node, jobs, jobs, fresh, true);
    return { node, count: jobs.length };
  }

  async function load() {
    const sub = $('subscription').value.trim();
    if (!sub || loading) return;
    loading = true;
    history.replaceState(null, '', '#subscription=' + seg(sub) + ($('unhealthy-only').checked ? '&unhealthy=1' : ''));
    setStatus(`Loading the job collections of ${sub}…`);
    $('refresh').disabled = false;
    try {
      const fresh = new Map();
      const sections = [];
      let colls = [];
      let summary;
      if ($('unhealthy-only').checked) {
        const view = await unhealthySection(sub, fresh);
        sections.push(view.node);
        summary = `${view.count} unhealthy job(s) of ${sub}`;
      } else {
        colls = await list(armURL(`/subscriptions/${seg(sub)}/providers/Microsoft.Scheduler/jobCollections`));
        for (const coll of colls) sections.push(await collectionSection(coll, fresh));
        summary = `${colls.length} collection(s) of ${sub}`;
      }
      // Histories the user opened stay open.
      for (const [path, entry] of shown) {
        const again = fresh.get(path);
        if (again && entry.nodes[1] && entry.nodes[1].querySelector('details').open) again.nodes[1].querySelector('details').open = true;
      }
      shown = fresh;
      $('collections').replaceChildren(...sections);
      const none = !colls.length && !$('unhealthy-only').checked;
      $('empty').textContent = none ? `Subscription ${sub} has no job collections.` : '';
      $('empty').hidden = !none;
      showError('error', null);
      needToken(null);
      setStatus(`${summary}, read at ${when(new Date().toISOString())}.`);
      document.body.dataset.loaded = String(Number(document.body.dataset.loaded || 0) + 1);
    } catch (err) {
      if (needToken(err)) {
        shown = new Map();
        $('collections').replaceChildren();
        $('empty').textContent = 'The job collections show once the API accepts a token.';
        $('empty').hidden = false;
      }
      showError('error', err);
      setStatus('');
    } finally {
      loading = false;
    }
  }

  // ---- preview ----

  // shiftText says what a DST transition did to a run, as recur preview does.
  function shiftText(s) {
    switch (s.change) {
      case 'moved': return 'DST moved it: ' + s.wallClock + ' did not exist';
      case 'doubled': return 'DST doubled it: ' + s.wallClock + ' came twice and runs at both';
      default: return 'DST: ' + s.wallClock + ' came twice and runs once';
    }
  }

  async function preview(event) {
    event.preventDefault();
    const f = event.target.elements;
    const cron = f.cron.value.trim();
    // An RRULE's lines are kept as written; only the text's ends go.
    const rrule = f.rrule.value.trim();
    const recurrence = rrule ? { rrule } : cron ? { cron } : { frequency: f.frequency.value, interval: Number(f.interval.value || 1) };
    if (f.timeZone.value.trim()) recurrence.timeZone = f.timeZone.value.trim();
    if (f.dstGap.value !== 'shiftForward' || f.dstRepeat.value !== 'first') {
      recurrence.dst = { gap: f.dstGap.value, repeat: f.dstRepeat.value };
    }
    const body = { recurrence };
    if (f.startTime.value.trim()) body.startTime = f.startTime.value.trim();
    const out = $('preview-result');
    out.replaceChildren();
    try {
      if (f.raw.value.trim()) {
        // The recurrence as written, sent untouched: the API knows its
        // members, the dashboard need not.
        try { body.recurrence = JSON.parse(f.raw.value); } catch (e) {
          throw Object.assign(new Error('the recurrence is not valid JSON: ' + e.message), { target: 'recurrence' });
        }
      } else if (!cron && !rrule && f.schedule.value.trim()) {
        try { recurrence.schedule = JSON.parse(f.schedule.value); } catch (e) {
          throw Object.assign(new Error('the schedule is not valid JSON: ' + e.message), { target: 'recurrence.schedule' });
        }
      }
      const count = Math.min(100, Math.max(1, Number(f.count.value || 10)));
      const data = await call('POST', '/recur/v1/preview?count=' + count, body);
      showError('preview-error', null);
      const times = (data && data.value) || [];
      const shifts = new Map(((data && data.dst) || []).map((s) => [s.time, s]));
      const zone = (data && data.timeZone && browserZone(data.timeZone)) || '';
      for (const t of times) {
        const li = el('li', {}, timeEl(t, zone));
        const s = shifts.get(t);
        if (s) {
          li.dataset.dst = s.change;
          li.append(' ', el('span', { className: 'dst', text: shiftText(s) }));
        }
        out.append(li);
      }
      if (!times.length) out.append(el('li', { className: 'hint', text: 'no occurrence: this schedule never runs again' }));
      out.dataset.count = String(times.length);
    } catch (err) {
      needToken(err);
      showError('preview-error', err);
    }
  }

  // ---- wiring ----

  function autoRefresh() {
    clearInterval(timer);
    // It waits while an action runs or asks for confirmation.
    const tick = () => { if (!busy && !document.querySelector('form.confirm')) load(); };
    timer = $('auto-refresh').checked ? setInterval(tick, 15000) : null;
  }

  document.addEventListener('DOMContentLoaded', () => {
    $('scope-form').addEventListener('submit', (e) => { e.preventDefault(); load(); });
    $('refresh').addEventListener('click', load);
    $('auto-refresh').addEventListener('change', autoRefresh);
    $('unhealthy-only').addEventListener('change', load);
    $('token-form').addEventListener('submit', (e) => {
      e.preventDefault();
      const value = $('token').value.trim();
      $('token').value = '';
      if (value) setToken(value);
      load();
    });
    $('forget-token').addEventListener('click', () => {
      setToken('');
      shown = new Map();
      $('collections').replaceChildren();
      $('empty').textContent = 'The token is forgotten. Show the jobs again to use the API without one.';
      $('empty').hidden = false;
    });
    $('preview-form').addEventListener('submit', preview);
    showTokenState();
    const hash = new URLSearchParams(location.hash.slice(1));
    const sub = hash.get('subscription');
    $('unhealthy-only').checked = hash.get('unhealthy') === '1';
    if (sub) {
      $('subscription').value = sub;
      load();
    }
  });
})();
