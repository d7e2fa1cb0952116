/** The explorer's one stylesheet, served at /explore/assets/explorer.css (no external font, no CDN). */
export const EXPLORER_CSS = `:root{--fg:#1b1f24;--muted:#5a6370;--bg:#fff;--panel:#f5f7fa;--line:#d9dee5;--accent:#1f5fbf;--bar:#4a86d8;--raters:#d9822b}
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
header.site{background:#0f2a4a;color:#fff;padding:.6rem 1rem;display:flex;flex-wrap:wrap;gap:.4rem 1.2rem;align-items:center}
header.site a{color:#fff;text-decoration:none}
header.site .brand{font-weight:700;font-size:1.1rem}
header.site nav{display:flex;flex-wrap:wrap;gap:.3rem .9rem}
main{max-width:1100px;margin:0 auto;padding:1rem}
footer.site{max-width:1100px;margin:1rem auto;padding:0 1rem 2rem;color:var(--muted);font-size:.85rem}
h1{font-size:1.45rem;margin:.4rem 0 .8rem;overflow-wrap:anywhere}
h2{font-size:1.15rem;margin:1.6rem 0 .5rem}
a{color:var(--accent)}
p.note,.muted{color:var(--muted)}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:.6rem}
.card{background:var(--panel);border:1px solid var(--line);border-radius:6px;padding:.6rem .8rem}
.card .v{font-size:1.35rem;font-weight:700;display:block;overflow-wrap:anywhere}
.card .k{color:var(--muted);font-size:.85rem}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch}
table{border-collapse:collapse;width:100%;font-size:.9rem}
th,td{text-align:left;padding:.3rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}
th{background:var(--panel);font-weight:600;white-space:nowrap}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.mono,code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.85rem}
.text{overflow-wrap:anywhere;word-break:break-word;max-width:28rem}
pre{background:var(--panel);border:1px solid var(--line);border-radius:6px;padding:.6rem;white-space:pre-wrap;overflow-wrap:anywhere}
form.search{display:flex;flex-wrap:wrap;gap:.4rem;margin:.6rem 0}
form.search input[type=search]{flex:1 1 18rem;min-width:0;padding:.45rem .6rem;font-size:1rem;border:1px solid var(--line);border-radius:4px}
form.search button{padding:.45rem 1rem;font-size:1rem;border:0;border-radius:4px;background:var(--accent);color:#fff}
.links{display:flex;flex-wrap:wrap;gap:.3rem 1rem}
.badge img{max-width:100%;height:auto}
ul.caveats li{margin:.2rem 0}
#paid-routes td:first-child{min-width:16rem}
svg.chart{width:100%;height:auto;max-width:720px;display:block;background:var(--panel);border:1px solid var(--line);border-radius:6px}
svg.chart .bar{fill:var(--bar)}
svg.chart .raters{stroke:var(--raters);stroke-width:1.5}
svg.chart .axis{stroke:var(--muted);stroke-width:1}
svg.chart .tick{fill:var(--muted);font-size:11px}
.legend .bar{color:var(--bar)}.legend .raters{color:var(--raters)}
.error{border-left:4px solid #c0392b;padding:.4rem .8rem;background:#fdf1f0}
dl.stats{display:grid;grid-template-columns:minmax(10rem,max-content) 1fr;gap:.2rem 1rem;margin:0}
dl.stats dt{color:var(--muted)}dl.stats dd{margin:0;font-variant-numeric:tabular-nums;overflow-wrap:anywhere}
.proof-verified,.live-alive{color:#1e7b34;font-weight:600}.proof-mismatch,.live-dead{color:#b3261e;font-weight:600}.proof-absent,.proof-unreachable,.live-pending,.live-not_probed{color:var(--muted)}
dl.declared dd{white-space:pre-wrap}
@media (max-width:600px){body{font-size:14px}main{padding:.6rem}th,td{padding:.25rem .3rem}dl.stats{grid-template-columns:1fr}dl.stats dd{margin-bottom:.3rem}}
`;
