// recur's jobs dashboard. Everything it shows comes from the API and goes
// into the page as text (textContent, attributes), never as markup.
'use strict';

(() => {
  const API_VERSION = '2016-03-01';
  const TOKEN_KEY = 'recur.dashboard.token';
  const HISTORY_ROWS = 40; // history rows read per job: about 20 to 40 runs
  const TIMELINE_RUNS = 20;
  const MAX_PAGES = 20; // nextLinks followed per list
  const $ = (id) => document.getElementById(id);

  let loading = false;
  let timer = null;

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

  async function call(method, url, body) {
    const headers = { Accept: 'application/json' };
    const token = getToken();
    if (token) headers.Authorization = 'Bearer ' + token;
    const init = { method, headers, credentials: 'omit', cache: 'no-store', redirect: 'error' };
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
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

  function fmtTime(iso) {
    const d = new Date(iso);
    if (!iso || Number.isNaN(d.getTime())) return String(iso || '');
    return d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
  }

  function relative(iso) {
    const ms = new Date(iso).getTime() - Date.now();
    if (Number.isNaN(ms)) return '';
    const abs = Math.abs(ms);
    const unit = abs < 90e3 ? [Math.round(abs / 1e3), 's'] : abs < 90 * 60e3 ? [Math.round(abs / 60e3), 'min']
      : abs < 36 * 3600e3 ? [Math.round(abs / 3600e3), 'h'] : [Math.round(abs / 86400e3), 'd'];
    return ms >= 0 ? `in ${unit[0]} ${unit[1]}` : `${unit[0]} ${unit[1]} ago`;
  }

  function timeCell(iso) {
    if (!iso) return el('td', { className: 'none' }, el('span', { 'aria-label': 'none', text: '–' }));
    return el('td', {}, el('time', { datetime: iso, className: 'abs', text: fmtTime(iso) }),
      el('span', { className: 'rel', text: ' ' + relative(iso) }));
  }

  function statusClass(status) {
    const s = String(status || '').toLowerCase();
    return ['completed', 'failed', 'postponed'].includes(s) ? s : 'other';
  }

  const SYMBOL = { completed: '✓', failed: '✗', postponed: '–', other: '?' };

  function setStatus(text) { $('status').textContent = text; }

  function showError(box, err) {
    const node = $(box);
    if (!err) { node.hidden = true; node.textContent = ''; return; }
    node.hidden = false;
    node.replaceChildren(el('strong', { text: err.status ? `Error ${err.status}` : 'Error' }), ': ' + err.message +
      (err.target ? ` (${err.target})` : ''));
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
    }
    return runs.reverse();
  }

  function timeline(runs) {
    const ol = el('ol', { className: 'timeline', 'aria-label': 'Recent runs, oldest first' });
    for (const run of runs.slice(-TIMELINE_RUNS)) {
      const cls = statusClass(run.status);
      const label = `${run.status} at ${fmtTime(run.start)}` + (run.message ? `: ${run.message}` : '');
      ol.append(el('li', { className: `run run-${cls}`, title: label, tabindex: 0, 'data-status': run.status },
        el('span', { 'aria-hidden': 'true', text: SYMBOL[cls] }), el('span', { className: 'visually-hidden', text: label })));
    }
    if (!runs.length) ol.append(el('li', { className: 'hint', text: 'no runs yet' }));
    return ol;
  }

  function historyDetails(rows, job) {
    const details = el('details', { className: 'history' }, el('summary', { text: `History of ${job} (${rows.length} rows)` }));
    if (!rows.length) return details;
    const body = el('tbody');
    for (const row of rows) {
      const p = row.properties || {};
      body.append(el('tr', { className: `row-${statusClass(p.status)}` },
        el('td', {}, el('time', { datetime: p.expectedExecutionTime, text: fmtTime(p.expectedExecutionTime) })),
        el('td', { text: p.actionName || '' }),
        el('td', {}, el('span', { className: `badge status-${statusClass(p.status)}`, text: p.status || '' })),
        el('td', { text: String(p.retryCount ?? '') }),
        el('td', { className: 'message', text: p.message || '' })));
    }
    details.append(el('table', { className: 'rows' },
      el('thead', {}, el('tr', {}, ...['Planned (UTC)', 'Action', 'Status', 'Retries', 'Message']
        .map((h) => el('th', { scope: 'col', text: h })))), body));
    return details;
  }

  function jobRow(job, rows) {
    const k = parts(job.id);
    const p = job.properties || {};
    const s = p.status || {};
    const action = p.action || {};
    const name = el('th', { scope: 'row' }, el('span', { className: 'job-name', text: k.job }),
      el('span', { className: 'hint', text: ' ' + (action.type || '') }));
    const row = el('tr', { 'data-job': k.job, className: 'job' },
      name,
      el('td', {}, el('span', { className: `badge state state-${String(p.state || '').toLowerCase()}`, text: p.state || '' }),
        p.stateReason ? el('span', { className: 'hint state-reason', text: ' ' + p.stateReason }) : ''),
      timeCell(s.nextExecutionTime),
      timeCell(s.lastExecutionTime),
      el('td', { className: 'counts', text: `${s.executionCount ?? 0} / ${s.failureCount ?? 0} / ${s.faultedCount ?? 0}` }),
      el('td', { className: 'runs' }, timeline(runsOf(rows))));
    // The history gets a row of its own, the table's full width.
    const history = el('tr', { 'data-history-of': k.job, className: 'history-row' },
      el('td', { colSpan: 6 }, historyDetails(rows, k.job)));
    return [row, history];
  }

  async function collectionSection(coll) {
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
    const jobs = await list(armURL(path + '/jobs'));
    // The first page of each job's history: its newest rows.
    const histories = await inTurn(jobs, (job) =>
      call('GET', armURL(`${path}/jobs/${seg(parts(job.id).job)}/history`, { $top: HISTORY_ROWS }))
        .then((data) => (data && data.value) || [], () => []));
    const tbody = node.querySelector('tbody');
    jobs.forEach((job, i) => tbody.append(...jobRow(job, histories[i])));
    if (!jobs.length) {
      node.querySelector('table').hidden = true;
      node.querySelector('.no-jobs').hidden = false;
    }
    return node;
  }

  async function load() {
    const sub = $('subscription').value.trim();
    if (!sub || loading) return;
    loading = true;
    history.replaceState(null, '', '#subscription=' + seg(sub));
    setStatus(`Loading the job collections of ${sub}…`);
    $('refresh').disabled = false;
    try {
      const colls = await list(armURL(`/subscriptions/${seg(sub)}/providers/Microsoft.Scheduler/jobCollections`));
      const sections = [];
      for (const coll of colls) sections.push(await collectionSection(coll));
      $('collections').replaceChildren(...sections);
      $('empty').textContent = colls.length ? '' : `Subscription ${sub} has no job collections.`;
      $('empty').hidden = colls.length > 0;
      showError('error', null);
      needToken(null);
      setStatus(`${colls.length} collection(s) of ${sub}, read at ${fmtTime(new Date().toISOString())}.`);
      document.body.dataset.loaded = String(Number(document.body.dataset.loaded || 0) + 1);
    } catch (err) {
      if (needToken(err)) {
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
    const recurrence = cron ? { cron } : { frequency: f.frequency.value, interval: Number(f.interval.value || 1) };
    if (f.timeZone.value.trim()) recurrence.timeZone = f.timeZone.value.trim();
    if (f.dstGap.value !== 'shiftForward' || f.dstRepeat.value !== 'first') {
      recurrence.dst = { gap: f.dstGap.value, repeat: f.dstRepeat.value };
    }
    const body = { recurrence };
    if (f.startTime.value.trim()) body.startTime = f.startTime.value.trim();
    const out = $('preview-result');
    out.replaceChildren();
    try {
      if (!cron && f.schedule.value.trim()) {
        try { recurrence.schedule = JSON.parse(f.schedule.value); } catch (e) {
          throw Object.assign(new Error('the schedule is not valid JSON: ' + e.message), { target: 'recurrence.schedule' });
        }
      }
      const count = Math.min(100, Math.max(1, Number(f.count.value || 10)));
      const data = await call('POST', '/recur/v1/preview?count=' + count, body);
      showError('preview-error', null);
      const times = (data && data.value) || [];
      const shifts = new Map(((data && data.dst) || []).map((s) => [s.time, s]));
      for (const t of times) {
        const li = el('li', {}, el('time', { datetime: t, text: fmtTime(t) }));
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
    timer = $('auto-refresh').checked ? setInterval(load, 15000) : null;
  }

  document.addEventListener('DOMContentLoaded', () => {
    $('scope-form').addEventListener('submit', (e) => { e.preventDefault(); load(); });
    $('refresh').addEventListener('click', load);
    $('auto-refresh').addEventListener('change', autoRefresh);
    $('token-form').addEventListener('submit', (e) => {
      e.preventDefault();
      const value = $('token').value.trim();
      $('token').value = '';
      if (value) setToken(value);
      load();
    });
    $('forget-token').addEventListener('click', () => {
      setToken('');
      $('collections').replaceChildren();
      $('empty').textContent = 'The token is forgotten. Show the jobs again to use the API without one.';
      $('empty').hidden = false;
    });
    $('preview-form').addEventListener('submit', preview);
    showTokenState();
    const sub = new URLSearchParams(location.hash.slice(1)).get('subscription');
    if (sub) {
      $('subscription').value = sub;
      load();
    }
  });
})();
