// The console's own script (CSP: no inline script, no eval). Everything works
// without it; it adds the charts (uPlot), submits the account selector on
// change, asks before destructive actions, and keeps htmx's swaps in step.
;(() => {
  const charts = new Map()

  const two = (n) => String(n).padStart(2, '0')
  // "2026-11-27 14:00 UTC": the console's time format (docs/console.md#times-and-codes), to the minute.
  const fullTime = (ts) => {
    const d = new Date(ts * 1e3)
    return `${d.getUTCFullYear()}-${two(d.getUTCMonth() + 1)}-${two(d.getUTCDate())} ${two(d.getUTCHours())}:${two(d.getUTCMinutes())} UTC`
  }
  const axisTime = (ts, x) => {
    const d = new Date(ts * 1e3)
    const hm = `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}`
    return x.max - x.min <= 36 * 3600 ? hm : `${two(d.getUTCMonth() + 1)}-${two(d.getUTCDate())} ${hm}`
  }

  function drawChart(el) {
    if (charts.has(el) || typeof uPlot === 'undefined') return
    let data
    try {
      data = JSON.parse(el.getAttribute('data-chart') || '')
    } catch {
      return
    }
    const colors = ['#0a58ca', '#116329', '#a40e26', '#7d4e00']
    const width = () => Math.max(260, el.clientWidth)
    const opts = {
      width: width(),
      height: 240,
      series: [
        { label: 'Time (UTC)', value: (_u, ts) => (ts == null ? '–' : fullTime(ts)) },
        ...data.labels.map((label, i) => ({ label, stroke: colors[i % colors.length], width: 2, points: { show: false } })),
      ],
      // A 24-hour clock in UTC, as every time in the console: 14:00 within a day, 11-27 14:00 over several.
      axes: [{ values: (u, splits) => splits.map((ts) => axisTime(ts, u.scales.x)), space: 70 }, { size: 50 }],
      scales: { x: { time: true } },
      legend: { live: true },
      // Times in UTC, as every other time in the console.
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1e3), 'Etc/UTC'),
    }
    el.textContent = ''
    const plot = new uPlot(opts, [data.t, ...data.series], el)
    charts.set(el, plot)
    const resize = () => plot.setSize({ width: width(), height: 240 })
    window.addEventListener('resize', resize)
  }

  function enhance(root) {
    for (const el of root.querySelectorAll('[data-chart]')) drawChart(el)
    for (const sel of root.querySelectorAll('select[data-autosubmit]')) {
      if (sel.dataset.bound) continue
      sel.dataset.bound = '1'
      sel.addEventListener('change', () => sel.form?.requestSubmit())
    }
  }

  // A form with data-confirm asks first (htmx's own hx-confirm would need no eval either,
  // but this also covers the forms that submit without htmx).
  document.addEventListener(
    'submit',
    (e) => {
      const form = e.target
      const question = form instanceof HTMLFormElement ? form.getAttribute('data-confirm') : null
      if (question && !window.confirm(question)) {
        e.preventDefault()
        e.stopImmediatePropagation()
      }
    },
    true,
  )

  document.addEventListener('DOMContentLoaded', () => enhance(document))
  document.addEventListener('htmx:load', (e) => enhance(e.target))
  // After a boosted navigation, move focus to the new page's heading, as a full load would reset it.
  document.addEventListener('htmx:afterSettle', () => {
    const h1 = document.querySelector('main h1')
    if (h1 && !document.activeElement?.closest('main')) {
      h1.setAttribute('tabindex', '-1')
      h1.focus({ preventScroll: true })
    }
    document.body.dataset.settled = String(Number(document.body.dataset.settled || 0) + 1)
  })
})()
