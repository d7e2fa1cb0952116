/**
 * The day-by-day activity of a chain as an inline SVG bar chart, drawn by hand (no library): one bar
 * per day for the ratings of that day, a line for the distinct raters, the first and last day and
 * the maximum on the axes. Presentation attributes only (no `style` attribute: the page's CSP has
 * no 'unsafe-inline'); colours come from the explorer's stylesheet through classes.
 */
import { h, type Html } from './html.js';

export interface ActivityDay {
  day: string;
  ratings: number;
  raters: number;
}

const W = 720;
const H = 220;
const PAD = { left: 40, right: 10, top: 14, bottom: 28 };

export function activityChart(days: readonly ActivityDay[], label: string): Html {
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const max = Math.max(1, ...days.map((d) => d.ratings), ...days.map((d) => d.raters));
  const step = days.length > 0 ? plotW / days.length : plotW;
  const barW = Math.max(1, step * 0.8);
  const y = (v: number) => PAD.top + plotH - (v / max) * plotH;
  const r2 = (v: number) => Math.round(v * 100) / 100;
  const bars = days.map((d, i) => {
    const x = PAD.left + i * step + (step - barW) / 2;
    const top = y(d.ratings);
    return h`<rect class="bar" data-day="${d.day}" data-ratings="${d.ratings}" data-raters="${d.raters}" x="${r2(x)}" y="${r2(top)}" width="${r2(barW)}" height="${r2(PAD.top + plotH - top)}"><title>${d.day}: ${d.ratings} ratings, ${d.raters} raters</title></rect>`;
  });
  const points = days.map((d, i) => `${r2(PAD.left + i * step + step / 2)},${r2(y(d.raters))}`).join(' ');
  const first = days[0]?.day ?? '';
  const last = days[days.length - 1]?.day ?? '';
  const total = days.reduce((s, d) => s + d.ratings, 0);
  return h`<svg class="chart" viewBox="0 0 ${W} ${H}" role="img" aria-label="${label}: ${total} ratings over ${days.length} days" xmlns="http://www.w3.org/2000/svg">
<line class="axis" x1="${PAD.left}" y1="${PAD.top + plotH}" x2="${W - PAD.right}" y2="${PAD.top + plotH}"/>
<line class="axis" x1="${PAD.left}" y1="${PAD.top}" x2="${PAD.left}" y2="${PAD.top + plotH}"/>
<text class="tick" x="${PAD.left - 4}" y="${PAD.top + 4}" text-anchor="end">${max}</text>
<text class="tick" x="${PAD.left - 4}" y="${PAD.top + plotH}" text-anchor="end">0</text>
${bars}
${days.length > 0 ? h`<polyline class="raters" fill="none" points="${points}"/>` : ''}
<text class="tick" x="${PAD.left}" y="${H - 8}">${first}</text>
<text class="tick" x="${W - PAD.right}" y="${H - 8}" text-anchor="end">${last}</text>
</svg>`;
}
