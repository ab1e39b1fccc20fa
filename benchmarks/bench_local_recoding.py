"""Benchmark (issue 28): two-phase and k-member beside ARX 3.9.2's local recoding, same run, on Adult.

Per k: ARX's ``local K ITERATIONS`` (``../shared/arx``; the recipe of
``benchmarks/arx_local_recoding``: loss metric, suppression limit 1 − 1/iterations,
``optimizeIterativeFast``; its process CPU) and ours (process CPU of one ``anonymize``
call: encoding, clustering, publishing and the core's re-measurement included), the CPU
ratio ours/ARX and both NCPs (hierarchy-domain NCP, ARX's 1 − granularity). ARX is warmed
up twice first (JIT). Without ``../shared/arx`` or ``java`` ARX is skipped with a message.

``--copies C`` runs on Adult ×C (copy c ≥ 1 of row i gets age' = clamp(age + ((i·31 + c·17) mod 7) − 3,
17, 90), ``bench_lattice.replicate``; ARX reads the same rows from a temporary CSV, deleted after the run).

``--check`` turns the issue's goals into assertions (run by hand, not in CI): two-phase's
NCP at most 2 % above the pins below (and above ``BEFORE_APPROXIMATE``) and below ARX's; with
ARX, two-phase CPU ≤ ARX's and k-member CPU ≤ 2 × ARX's (with ``--repeat N``: the median ratio
of N same-run repetitions); it prints two-phase's NCP against ``BEFORE_APPROXIMATE`` in per cent.
``--profile ALGORITHM`` prints a cProfile of one run instead.

NCP pins before issue 28 (two-phase split b, seed 0): 0.0262 / 0.0419 / 0.0615 at k = 5 / 10 / 20.

Measured 2026-11-26 on the shared 2-core machine (load 3–4; ARX's CPU varied 0.7–2.5 s between runs),
NCP / CPU seconds (ratio to ARX in the same run):

    k   ARX local       two-phase before   two-phase after        k-member before   k-member after
    5   0.0307 / 1.19   0.0262 / 20.4      0.0263 / 10.3 (8.9×)   0.0377 / 8.8      0.0379 / 1.7 (1.4×)
   10   0.0455 / 1.14   0.0418 / 27.8      0.0417 / 12.1 (7.6×)   0.0653 / 7.7      0.0660 / 1.2 (1.1×)
   20   0.0637 / 1.20   0.0616 / 19.7      0.0618 / 12.9 (9.8×)   0.1049 / 6.3      0.1046 / 1.5 (1.3×)

Adult ×2 (60,324 rows), k = 10: ARX 0.0322 / 1.3; two-phase 0.0280 / 43.2 before, 0.0283 / 22.9 after;
k-member 0.0415 / 26.3 before, 0.0417 / 3.0 after.

Optional compiled phase 1 (``cluster_merge_kernel``, numba 0.68.1, size-only models), measured
2026-11-26 13:20 back to back on the shared machine (load 8–9), two-phase NCP / CPU (ratio to ARX in
the same run); numpy path: ``/work/main/.venv`` (no numba), kernel: a venv with numba added:

    k   ARX local       two-phase numpy        two-phase + numba kernel
    5   0.0307 / 1.10   0.0263 / 11.5 (10.5×)   0.0263 / 6.0 (4.4×)    (ARX 1.36 in that run)
   10   0.0455 / 1.65   0.0417 / 14.6 (8.9×)    0.0418 / 7.2 (4.0×)    (ARX 1.78)
   20   0.0637 / 2.06   0.0618 / 15.8 (7.7×)    0.0616 / 6.7 (4.4×)    (ARX 1.50)

Kernel phase 1 alone at k = 10: ~0.9 s first pricing + ~2.6 s merging (numpy: ~8–9 s); the rest is
refining (numpy, ~2.5–3 s). k = 10 with the kernel on Adult ×1/×2/×4: 6.2 / 12.3 / 28.0 s
(growth exponent 1.09), NCP 0.0418 / 0.0280 / 0.0177.

Issue 28, second pass (2026-11-26 ~19:00, numba 0.68.1 in the shared venv; our kernels warmed up on 2,000
rows first, as ARX's JIT is): k-member's greedy pass compiled (``cluster_greedy_kernel``; ties by a seeded
unit key in both paths, so its NCP moved slightly), NCP / CPU (ratio to ARX in the same run):

    k   ARX local       k-member               two-phase (unchanged code)
    5   0.0307 / 1.03   0.0380 / 0.38 (0.37×)   0.0263 / 5.04 (4.9×)
   10   0.0455 / 1.36   0.0654 / 0.28 (0.21×)   0.0418 / 5.44 (4.0×)
   20   0.0637 / 1.12   0.1034 / 0.22 (0.20×)   0.0616 / 6.12 (5.5×)

k-member k = 10 on Adult ×1 / ×4 / ×8 / ×32 (blocks of at most 131,072 rows above that size: 1 / 1 / 2 / 8
blocks): 0.31 / 2.10 / 2.74 / 5.44 s CPU (30k → 965k rows: growth exponent 0.83), NCP 0.0654 / 0.0267 / 0.0180
/ 0.0081 (×4 cut into four blocks of 30k instead: 0.75 s, NCP 0.0363: blocks cost NCP). Two-phase's profile at k = 10:
the compiled merge kernel ~55 %, the refine rounds ~40 % (move pricing, dissolve rounds, ``_without``).

Issue 28, third pass (branch twophase28, 2026-11-26 22:20, load 2.6–3): two-phase with no all-pairs
re-pricing — phase 1's kernel buckets clusters by the spans of two QIs (visited cheapest bound first),
takes the next small cluster from a heap with lazy invalidation, finds the clusters to re-price through
per-partner notes and offers a merged cluster only to buckets where it can win; the refine rounds keep
prices per unit (distinct QI codes) between rounds and re-price only the clusters a move changed (the
same moves, tested); the dissolution walk is compiled (the same choices, tested). Same run, `--check`:

    k   ARX local       two-phase before (6c0ed29, 21:24, load 0.6)   two-phase after
    5   0.0307 / 0.88   0.0263 / 4.33 (4.8×)                          0.0263 / 2.23 (2.5×)
   10   0.0455 / 1.03   0.0418 / 5.30 (4.9×)                          0.0416 / 2.57 (2.5×)
   20   0.0637 / 1.27   0.0616 / 6.50 (5.7×)                          0.0618 / 2.88 (2.3×)

A second run at 22:29 (after dropping empty buckets from the kernel's list): ARX 0.89 / 0.90 / 0.86 s,
two-phase 2.14 / 2.50 / 2.88 s (2.4 / 2.8 / 3.3×), same NCPs. NCP goals met (≤ 1.02 × the pins, below
ARX's); the CPU goal (≤ ARX's) is not: 2.3–3.3× ARX (ARX's own CPU varies 0.86–1.27 s). Where the
time goes now (k = 10, CPU s, one run): phase 1 ~1.5–1.8 (the merge kernel's ~10k steps: offering each
merged cluster to the small ones and re-pricing those that pointed at it), splitting ~0.1–0.2, refine
~1.0 (move rounds ~0.6, dissolve rounds ~0.35), publishing and re-measuring ~0.05.

Issue 28, fourth pass (branch arx28, 2026-11-27 ~01:20, machine at load 13–16: CPU seconds inflated for
everyone): the same outputs (published tables byte-equal to c430be5's at k = 5 / 10 / 20), cheaper steps —
phase 1 prices a bucket member (an offer, or a re-pricing candidate) only when the bucket's spans plus either
cluster's cost on the other QIs can still win (offers priced at k = 10: 32M → 3M; ``merge_units(prune=False)``
is the tested reference), the refine rounds pick their candidates by grouped maxima instead of two sorts of
every movable record, the catch-up of kept prices runs compiled per unit, and a dissolve round sorts the
groups once. Back to back, two runs each (ours only, CPU s): c430be5 2.54–2.74 / 2.75–3.25 / 3.12–3.52,
arx28 2.31–2.53 / 2.46–2.52 / 2.60–2.77. Same-run ``--check`` (01:16): ARX 0.0307 / 1.11, 0.0455 / 1.33,
0.0637 / 1.30; two-phase 0.0263 / 2.70 (2.4×), 0.0416 / 2.76 (2.1×), 0.0618 / 3.07 (2.4×); k-member 0.0380 /
0.54 (0.49×), 0.0654 / 0.31 (0.23×), 0.1034 / 0.27 (0.21×). NCP goals met; two-phase CPU ≤ ARX's is not (k-member
≤ 2× ARX is). Where two-phase's time goes now (k = 10, loaded): phase 1 ~1.5 s (~33k full re-pricings, each
bounding ~900 buckets and pricing ~700 candidates; the offers ~0.4 s), splitting ~0.1–0.3 s, refining ~0.7–0.9 s.

Issue 28, fifth pass (branch fast28, 2026-11-27 04:26, load 4.9–5.5; the published tables byte-equal to
f364ed8's at k = 5 / 10 / 20): phase 1's re-pricing visits the cheapest bucket first and the rest in list
order (no sort per re-pricing), and its bucket bounds count what a partner must give (an offer: all of the
offered cluster unless it can spare a record; a re-pricing: the bucket's smallest member or x's need), so
fewer buckets are opened (the same steps: ``prune=False`` still tested equal); the refine step prices units
and a dissolution's records in compiled loops over one row of joined costs (no units × clusters
temporaries); a dissolution walk is skipped on a tighter lower bound (each record's share of its target's
growth: ~37 % fewer walks, none that would have succeeded); splitting B bisects every big cluster in the
same Mondrian rounds (``partition_rows(start=)``), not one call per cluster. Same run, ``--check``, two
runs back to back, then f364ed8 (NCP / CPU s, ratio to ARX in the same run):

    k   ARX local (3 runs)    two-phase fast28 (2 runs)             two-phase f364ed8
    5   0.0307 / 0.67–0.74    0.0263 / 1.08, 1.07 (1.6×, 1.5×)      0.0263 / 1.72 (2.5×)
   10   0.0455 / 0.71–0.99    0.0416 / 1.32, 1.31 (1.4×, 1.3×)      0.0416 / 2.12 (3.0×)
   20   0.0637 / 1.03–1.47    0.0618 / 1.44, 1.46 (1.4×, 1.4×)      0.0618 / 2.21 (1.5×)

k-member in the same runs: 0.36 / 0.26 / 0.21 s (0.5× / 0.3× / 0.2× ARX). NCP goals met; two-phase
CPU ≤ ARX's still is not (1.3–1.6×; ~37 % less CPU than f364ed8). Where two-phase's time goes now
(k = 10, CPU s): phase 1 ~0.85 (its initial pricing ~0.14; ~22k re-pricings, each bounding every listed
bucket, ~0.17 of it; the offers), splitting ~0.01, refining ~0.45 (move rounds ~0.2, about half of it fresh
pricing of every unit after each dissolve round renumbers the clusters; dissolve rounds ~0.2, ~700 walks for
~24 dissolutions). ``bench_scale.py --algorithms two-phase --copies 1,4`` back to back (04:14, load 5.6,
before the phase-1 bound changes): f364ed8 2.26 / 4.39 s CPU, fast28 1.49 / 3.82 s, NCP 0.04158 / 0.01771 both.

Issue 28, sixth pass (branch fast28b, 2026-11-27 04:55, load 1–3; the published tables byte-equal to
lead40's at k = 5 / 10 / 20, NCP 0.026297 / 0.041582 / 0.061787): refine keeps its unit prices across a
dissolve round (renumbered; a unit pointing at a cluster that grew or was dissolved is priced afresh, the
others are caught up with the grown clusters) and the records' savings of the clusters that took no
record, instead of pricing every unit and record again; a failed dissolution walk no longer recomputes the
span rows of the boxes it restored exactly (dissolve rounds at k = 10: 0.17 → 0.13 s); a round's changed
clusters' records come from a mask, not ``np.isin``; phase 1 computes the scanned / offered cluster's own
cost on the bucket QIs once, not per bucket. Same run, back to back, lead40 then this branch twice
(NCP / CPU s, ratio to ARX in the same run):

    k   ARX local (4 runs)    two-phase lead40 (2 runs)         two-phase fast28b (2 runs)
    5   0.0307 / 0.74–0.78    0.0263 / 1.03, 1.07 (1.3×, 1.4×)  0.0263 / 0.95, 0.97 (1.3×, 1.2×)
   10   0.0455 / 0.94–1.01    0.0416 / 1.25, 1.28 (1.3×, 1.3×)  0.0416 / 1.14, 1.18 (1.2×, 1.2×)
   20   0.0637 / 1.07–1.46    0.0618 / 1.52, 1.43 (1.1×, 1.3×)  0.0618 / 1.29, 1.31 (1.0×, 0.9×)

Three more ``--check`` runs of this branch (load 1–2.4): 0.93–0.97 / 1.15–1.25 / 1.27–1.31 s against ARX's
0.55–0.76 / 0.87–1.05 / 0.90–1.04 (1.3–1.7× / 1.2–1.3× / 1.2–1.5×): ~8–12 % less CPU than lead40; at or below
ARX only at k = 20 in some runs, ARX's own CPU varying ±30 % between runs. Where the time goes now (k = 10,
CPU s): phase 1 ~0.80 (counted: ~33k scans bound ~29M buckets, ~0.16 s, and list ~31M candidates of which
~22M are priced, ~0.35 s; offers ~0.15 s: 11M bucket bounds, 8.4M members walked, 3M priced, ~430
accepted); refine ~0.33 (move rounds 0.18, of it fresh unit prices 0.05 and box updates 0.03; dissolve
rounds 0.13, of it the compiled dissolution prices 0.07 for ~1,300 candidates). Tried and dropped (no gain,
same steps): grouping the listed buckets by their first-QI span (a group bound skips ~46 % of the bucket
bounds but costs as much as it saves), one ``(n, 2, QIs)`` array for low and high (memory is not the
bottleneck), skipping buckets with no small member before an offer's join, a wider id window, inlining
``_best_of``. Phase 1 needs fewer re-pricings (~23k after ~10k steps), not cheaper ones, to go further.

Issue 28, seventh pass (branch fast28c, 2026-11-27 05:15, load 6–9 from a CI run; no code change kept):
fewer phase-1 re-pricings, tried three ways, each giving the very same steps (``prune=False`` equality
and the Adult tables unchanged, NCP 0.041582 at k = 10) but more CPU, so all dropped. Counted at k = 10:
14,958 re-pricings (a small cluster whose best partner was merged or lent), against phase 1's
0.79–0.80 s in the same runs.

* A kept runner-up per small cluster plus a log of the clusters each step changed: a re-pricing
  prices the old best, the runner-up and the clusters changed since its scan, and takes their best
  when it is below the runner-up's price (every other cluster priced at least that then). Tracking
  the runner-up means pruning every scan against the second price, not the best: phase 1 0.79 →
  1.07 s with the shortcut disabled, 1.07 with it. 11,907 re-pricings came more than 64 steps after
  their cluster's scan (the log too long to price); requiring an unchanged runner-up, 10,818 had it
  changed too (a small cluster's two cheapest partners are neighbours, merged together); ~600 settled.
* Changed buckets first (per listed bucket the last step that put a cluster in it): a re-pricing
  visits only the buckets changed since its cluster's scan and the old best; their best is the best
  of all when below the old best price (beyond the ties' tolerance) or at it and winning the tie;
  otherwise the other buckets, from the best so far. 3,588 + 784 of the 14,958 settled: mostly the
  new best is dearer than the old one (the partner grew), and the unchanged clusters are then only
  known to cost at least the old price. Phase 1 0.79 → 0.84–0.88 s.
* The same with a floor: during a scan a lower bound on every other cluster's price (skipped
  buckets' and members' bounds, the losers' prices), accepted below it. The floor is barely above
  the best price (a bucket bound just above it), exceeding it in 2,278 of the 11,342 failures;
  3,616 settled. Phase 1 0.80 → 0.88–0.90 s.
* A changed rule (not a pruning): a small cluster pointing at a lender that kept its box and still
  lends to it keeps that price and is priced only against the borrower. Phase 1 0.79 s either way
  (no gain) and the choices change (NCP 0.026297 / 0.041654 / 0.061673): dropped too.

Where the 14,958 re-pricings come from (k = 10): 8,842 pointed at a cluster that then took another
whole, 5,630 at one taken whole, 234 at a borrower, 252 at a lender; 5,716 end with the same partner
(the grown one), 8,692 at a higher price than before. So what a scan learns about the other clusters
is no sharper than its best price; proving a
re-pricing's result without visiting the unchanged buckets rarely works and its bookkeeping costs
more than it saves. Same run (``--check``, three runs, load 6.7–9.0): two-phase 0.93, 0.94, 0.98 / 1.12,
1.14, 1.16 / 1.27, 1.30, 1.30 s CPU against ARX's 0.66, 0.49, 0.74 / 0.93, 1.66, 0.76 / 1.31, 1.26, 0.84
(1.4×, 1.9×, 1.3× / 1.2×, 0.7×, 1.5× / 1.0×, 1.0×, 1.5×): ARX's own CPU swings ±50 % under this load.

Issue 28, eighth pass (branch tp28d, 2026-11-27 07:43, load 6.4–6.7): approximate rules, NCP at seed 0
within ±0.4 % of b0401b7's (0.026297 / 0.041582 / 0.061787 → 0.026212 / 0.041628 / 0.062035; seeds 1–3
−0.6…+1.4 %, the largest at k = 10 / 20). Phase 1 (k = 10: ~0.80 → ~0.24 s with its first pricing):

* a small cluster whose partner changed is priced against the changed partner(s) only and queued at its
  last full price, priced in full when it comes up (lazy: ~20k re-pricings, ~5.7k full);
* a merged cluster is offered to no one (the small clusters see it when next priced in full; the offers
  were ~20 % of phase 1 for no better NCP);
* the first pricing of a small unit looks only at the units differing from it in at most two QIs (per QI
  pair its run of equal other codes, 32 each side at most; ~0.05 s instead of ~0.17 s of full scans;
  a full scan where none; the numpy path takes the same rule without the 32);
* a merged cluster that is still small is priced among its neighbourhood (the small clusters that pointed
  at its parts and its id neighbours; in full when none did): ~20 % of the CPU for NCP +0.0–0.2 % at seed 0,
  up to +1.3 % on other seeds. Kernel only: in the numpy path (models beyond k) this rule made
  ``test_history_cover``'s two-phase leakage case fail the composition gate, so there it prices in full.

Refine (k = 10: ~0.43 → ~0.27 s): a dissolve round that dissolves fewer than five clusters is the last one;
a round leaves settled records out of each cluster's leaders (priced since their cluster and their two
cheapest changed, no gain then; two spare leaders per cluster take their slots, so the filter reads the
leaders, not every record: over every record it cost 5 s more refine at 1M rows). ``--repeat 3``, back to
back: b0401b7's library with this bench, then this branch (ARX then ours per k and repetition; ARX's CPU
falls as its JIT warms over the repetitions):

    k   ARX (b0401b7's run)  two-phase b0401b7   ARX (tp28d's run)    two-phase tp28d    tp28d / ARX (median)
    5   0.69, 0.33, 0.27     0.0263 / 0.95–0.97  0.71, 0.37, 0.29     0.0262 / 0.49–0.51  0.70, 1.33, 1.74 (1.33)
   10   0.90, 0.44, 0.44     0.0416 / 1.15–1.18  0.88, 0.47, 0.43     0.0416 / 0.55–0.57  0.62, 1.19, 1.32 (1.19)
   20   0.81, 0.62, 0.61     0.0618 / 1.30–1.31  0.67, 0.63, 0.63     0.0620 / 0.60–0.62  0.89, 0.97, 0.98 (0.97)

b0401b7's medians were 2.95 / 2.62 / 2.10 (first repetitions 1.38 / 1.29 / 1.62): ~50 % less CPU. Other
same-code runs: 1.31 / 1.28 / 1.02 (07:42, load 6.7); before the spare leaders (settled records filtered over
every record, Adult ~0.03 s faster at k = 5 / 10): 0.98 / 0.88 / 0.77 ("all goals met", 07:36, load 5) and
1.10 / 0.91 / 0.84 (07:34). So below ARX in every first repetition (ARX warmed twice, as every earlier pass
measured it) and at k = 20 by the median, but k = 5 / 10 pass or fail by run against a fully warm ARX
(0.29–0.38 / 0.43–0.47 s). Adult ×33 (995,346 rows), k = 10: 10.0 s CPU, NCP 0.001315 (b0401b7: 10.4 s,
0.001311; phase 1 2.6 → 0.7 s, refine 6.5 → 8.0 s); ``bench_scale`` peak/read 1.75 at 1M rows. Where the time
goes now (k = 10, CPU s): phase 1 ~0.24 (first pricing ~0.05, the kernel ~0.18), refine ~0.27 (dissolve rounds
~0.07–0.10, move rounds' pricing ~0.1), the rest ~0.03. Tried and dropped: visiting only the B cheapest
buckets in every full pricing (B = 4…16: NCP +2.5–9 %), the first pricing from the id window only (+1.5–2.5
%), a merged small cluster over its 4–16 cheapest buckets (+4–9 %), starting dissolve rounds when a round
moves fewer than 3–10 records or gains under 0.01–0.03 % (more dissolve rounds, no less CPU), fewer refine
rounds (70 at k = 20: +0.8–1.6 %), smaller move budgets (±1 % NCP for 10–15 % of refine), a cache of hopeless
dissolutions (5–8 % of refine; the numpy path would need the same bound), a wider id window (no change), 16
instead of 32 each side in the first pricing (−0.01 s, NCP mixed).

Issue 28, ninth pass (branch tp28e, 2026-11-27 08:00, load 2.8–4.2): refine only (phase 1 unchanged).

* A move round's candidates (each cluster's leaders, settled ones left out, the first two per cluster, by
  saving, the first ``limit``) in one compiled pass (``cluster_refine_kernel.candidates``; the numpy path
  keeps its grouped maxima and sorts: the same picks, tested equal).
* A dissolve round dissolving fewer than half the round before it is the last one too (an approximation:
  Adult k = 10 / 20 stop after 25, 7 / 20, 9 instead of a third round dissolving 2; ~35 ms each; NCP at
  seed 0 0.026212 / 0.041707 / 0.062065, +0.0 / +0.2 / +0.05 % over tp28d's, +0.3 / +0.45 % over b0401b7's).
* A dissolve round takes the mover's boxes, costs and span rows, and the next mover the survivors' columns
  (none made afresh on either side; afresh after an undone dissolution; tested equal to fresh ones).
* Phase 1's first pricing sorts the units once per QI pair by one mixed-radix key (the other QIs, then
  the pair) and reads the runs off it, instead of a unique over the other QIs and a sort (the same order;
  ~0.01 s at k = 5).

``--check --repeat 3`` back to back, this branch (all but the last item) then lead42's library (bd76a6e)
with this bench:

    k   ARX (tp28e's run)    two-phase tp28e     ARX (lead42's run)   two-phase lead42   tp28e / ARX (median)
    5   0.53, 0.32, 0.28     0.0262 / 0.43–0.45  0.68, 0.38, 0.28     0.0262 / 0.48–0.50  0.85, 1.34, 1.54 (1.34)
   10   1.11, 0.47, 0.44     0.0417 / 0.44–0.45  0.85, 0.45, 0.43     0.0416 / 0.55      0.41, 0.94, 1.02 (0.94)
   20   1.05, 0.61, 0.61     0.0621 / 0.48–0.49  0.97, 0.62, 0.63     0.0620 / 0.60      0.46, 0.81, 0.81 (0.81)

lead42's medians in its run: 1.29 / 1.22 / 0.95. With every item (08:07 and 08:04, load 1.9–3.7; lead42
right after each, ours 0.41–0.44 / 0.43–0.44 / 0.46–0.48 s against lead42's 0.49–0.51 / 0.55–0.56 / 0.60–0.63):

    k   ARX (08:07)          tp28e / ARX (median)     lead42 / ARX (median)   medians at 08:04: tp28e, lead42
    5   0.62, 0.41, 0.36     0.71, 1.01, 1.16 (1.01)  0.74, 1.14, 1.54 (1.14)  1.23, 1.23
   10   0.96, 0.59, 0.56     0.45, 0.74, 0.78 (0.74)  0.68, 1.05, 1.11 (1.05)  0.69, 0.92
   20   1.49, 0.80, 0.80     0.31, 0.59, 0.59 (0.59)  0.69, 0.88, 0.89 (0.88)  0.69, 0.71

NCP (seed 0): 0.026212 / 0.041707 / 0.062065, −0.32 / +0.30 / +0.45 % over b0401b7's; seeds 1–3 against lead42:
k = 5 0.026271 / 0.026257 / 0.026318 (+0.1 / 0 / 0 %), k = 10 0.042074 / 0.041771 / 0.042060 (0 / +0.16 / 0 %),
k = 20 0.062528 / 0.062174 / 0.061643 (+0.3 / 0 / +0.15 %). So k = 10 and 20 pass by the median (~20 % less
CPU than lead42), k = 5 passes or fails by run (~13 % less CPU; a warm ARX takes 0.28–0.41 s there, ours
0.41–0.44). Where the time goes now (k = 5, CPU s): phase 1 ~0.20 (the merge kernel ~0.17, the first pricing
~0.03), refine ~0.19 (move rounds ~0.11, of it the fresh unit prices ~0.06, two thirds of them units never
priced before; dissolve rounds ~0.06, ~0.03 of it pricing ~315 candidates each), the rest ~0.03. Tried and dropped:
visiting clusters by cost in the compiled unit pricing and stopping at the first costlier than the second
price (exact, but 84 % of the clusters cost less than a candidate's second price at k = 5: 0.55 → 0.81 s at
k = 10); fewer dissolution candidates (Adult's successes are spread over all 331 tried, up to the last);
the unit pricing in chunks of 512 clusters over every unit (to keep span columns in cache: 0.42 → 0.48 s);
pricing the units sorted by their codes (−3 % at k = 5, nothing at 10 / 20); a gain-per-round stop for the
move rounds after the last dissolve round (those rounds now cost ~1–2 ms each).

Issue 28, tenth pass (branch tp28f, 2026-11-27 08:20, load 4.3–5.5): phase 1's merge kernel only, memory
layout, the same steps (its output byte-equal to lead42's at k = 5 / 10 / 20, so the same NCP). Counted at k = 5:
5,382 full scans bound 7.4M listed buckets (~0.04 s), visit 0.93M of them and walk 5.2M members, of which 3.4M
pass the member bound and are priced (~0.1 s, memory-bound); the rest of the loop ~0.04 s, its set-up ~0.007 s.

* the boxes (``low`` / ``high``) as int32 codes: half the cache lines per candidate (0.177 → 0.164 s);
* a candidate's liveness and lending read from its size alone (dead iff size 0; ``size − need ≥ min_size``
  implies not small): two arrays less per candidate (→ 0.153 s);
* the dense bucket tables (first member, list slot; 490k entries at Adult's span pairs) as int32 (→ 0.151 s).

Kernel alone (``time.process_time()``, best of 7, lead42 then this branch): 0.182 → 0.151 / 0.180 → 0.162 /
0.184 → 0.174 s at k = 5 / 10 / 20. ``--check --repeat 3`` back to back (this branch, lead42, this branch):
ours 0.40–0.43 / 0.43–0.46 / 0.48–0.51 s, lead42 0.42 / 0.43–0.44 / 0.47 s: the ~0.03 s is inside this load's
noise; medians vs ARX 1.06, 1.11 / 0.83, 0.85 / 0.65, 0.71 (lead42 1.26 / 0.76 / 0.63); warm ARX 0.29–0.40 s at
k = 5, so k = 5 still passes or fails by run. Tried and dropped (the same steps, no gain): a bucket bound
using the members' smallest cost on the other QIs (x's own is smaller almost always: 0.164 → 0.168 s), the
bucket bounds in a branch-free pass (−1.5 %), size and cost side by side in one array, int16 boxes, int32 bucket
spans, numpy's error model, a member count per listed bucket instead of reading the dense table's head
(0.147 → 0.155 s). What is left in phase 1 is the number of members priced per scan (~960), i.e. a
sharper bucket bound (a third QI in the bucket key does not fit a dense table: 125M span triples) or fewer scans.

Issue 28, eleventh pass (branch tp28g, 2026-11-27 08:29, load 5.0–5.9): refine's compiled unit pricing only,
the same sums and the same prices (output byte-equal: NCP 0.026212 / 0.041707 / 0.062065 as lead42). Profiled
warm at k = 5 (third run in one process): refine ~0.20 s = move rounds ~0.12 (the unit pricing kernel ~0.065
over 36 rounds, the round's own Python ~0.014, candidates ~0.008, savings ~0.012 of which ``_without`` 252 calls
~0.008, ``_changed`` ~0.018) + dissolve rounds ~0.067 (630 dissolution pricings ~0.035, the walks ~0.006) + the
first ``_Moves`` ~0.015; outside phase 1 and refine ~0.02. What is computed twice: refine's first tables (boxes,
sizes, costs, span rows; ~0.01 s of that ~0.015) are made afresh after the split step, which changes phase 1's
clusters; the unit prices are new work (units against clusters, phase 1 priced clusters against clusters).

* ``_price`` adds the last QI inside its pricing pass (one pass over the joined row less per unit) and makes
  ``|c| + 1`` and ``|c| · D(c)`` once per call (the same products): the kernel alone 0.063 → 0.058 s, best of 5
  on the recorded calls of a k = 5 run, the same outputs checked; the dissolution pricing keeps its least in a
  local (the fused form there was no faster: 0.069 → 0.071 s, not kept).

``--check --repeat 3`` back to back (this branch, then lead42's library with this bench):

    k   ARX (tp28g's run)    two-phase tp28g     ARX (lead42's run)   two-phase lead42   tp28g / ARX (median)
    5   0.63, 0.39, 0.34     0.0262 / 0.40–0.46  1.47, 0.34, 0.27     0.0262 / 0.40–0.46  0.74, 1.04, 1.18 (1.04)
   10   1.68, 0.54, 0.52     0.0417 / 0.41–0.44  0.72, 0.45, 0.43     0.0417 / 0.42–0.44  0.26, 0.77, 0.79 (0.77)
   20   1.18, 0.73, 0.69     0.0621 / 0.45–0.47  0.98, 0.60, 0.60     0.0621 / 0.47–0.48  0.40, 0.63, 0.65 (0.63)

lead42's medians in its run 1.19 / 0.94 / 0.79. Again at 08:30 (load 5.7–5.9), lead42 first: lead42 0.70 / 0.80 /
0.64 (ours-side CPU 0.39–0.45 / 0.42–0.43 / 0.46), this branch 0.72 / 0.83 / 0.72 (0.40–0.45 / 0.42–0.43 /
0.46–0.49), ARX's second repetition still warming (0.63–0.87 s at k = 5; third 0.28–0.32 s: third-run ratios
1.22 lead42, 1.44 ours). So the ~5 ms is inside this load's noise, k = 5 still passes or fails by run against a
warm ARX (0.27–0.39 s). Tried and dropped: pricing the units in lexicographic order of
their codes and re-adding only the QIs from the first one differing from the unit before (the same sums; Adult's
first QI, age, has ~70 codes, so little is shared: 0.0635 → 0.0641 s with the lexsort); the savings' ``_without``
over every QI at once (clusters numbered ``q · n_groups + g``: 252 calls → 36, but 0.008 → 0.012 s). Left: a
round's ``flatnonzero`` and permutation over every movable record (~0.007 s at k = 5; the permutation feeds the
seeded tie order, so dropping it changes the output), refine's first tables made afresh after the split step.

Issue 28, twelfth pass (refine) (branch tp28i, landed with tp28j's fix below; 2026-11-27 10:11–10:28, load 4.6–6.4):
the refine step and the
tables around it only (phase 1 unchanged). ``refine_clusters`` alone, best of 5–7 warm runs alternating with
main (CPU s): 0.208–0.219 → 0.123–0.130 at k = 5, 0.216 → 0.143 at k = 10, 0.257 → 0.185 at k = 20.

* Unit prices under a *ceiling* (approximate): a unit's two cheapest are kept only among the clusters adding at
  most the largest saving of its records when priced (a move gains only on a cluster adding less than the record
  saves); the compiled pricing marks the clusters whose bound ``D(c) + (|c| + 1) · (growth of two QIs' spans)``
  is within it (two row passes; the QI pair picked on the first call's first 8 units), lists them by reading the
  marks eight bytes at a time (most words are zero at ~100 of 3,528 clusters) and prices only those in full: the
  unit pricing ~0.065 → ~0.03 s at k = 5. A record saving more than its unit's ceiling is not settled and has its
  unit priced afresh. Which cluster is second beyond the ceiling is unknown, so a change of the true second no
  longer unsettles a record: NCP at seed 0 0.026239 / 0.041599 / 0.062164 (+0.10 / −0.26 / +0.16 % over main's
  0.026212 / 0.041707 / 0.062065; −0.22 / +0.04 / +0.61 % over b0401b7's), seeds 1–3 k = 5 0.026281 / 0.026284 /
  0.026341 (+0.04 / +0.10 / +0.09 % over main's), k = 10 0.042121 / 0.041748 / 0.041978 (+0.11 / −0.05 / −0.19 %),
  k = 20 0.062140 / 0.062274 / 0.062106 (−0.62 / +0.16 / +0.75 %).
* Exact, the same floats and choices as before: a record's saving in one compiled pass per QI (``savings``;
  numpy's ``_without`` is ~10 array calls per QI, ``minimum.at`` over every record for the first savings); a
  round's changed clusters' boxes, sizes, costs and span columns in one compiled call (``regrow``), and the first
  mover's tables by the same kernel over every cluster; a dissolve round's candidates priced, bounded and walked
  in one compiled scan until a walk succeeds (``dissolve_scan``: ~600 Python iterations a round less; a bound
  within 1e-9 of its threshold is handed back to numpy's pairwise sums, so the skips are the loop's); stable
  orders of cluster and unit ids as 16-bit radix sorts (1.8 → 0.23 ms per 30k ids); the survivors' columns
  after a dissolve round by ``np.take`` (one copy, not two).

``--check --repeat 3`` back to back (10:27 this branch, then main 9df1025 with this bench):

    k   ARX (tp28i's run)    two-phase tp28i     ARX (main's run)     two-phase main     tp28i / ARX (median)
    5   0.85, 0.35, 0.30     0.0262 / 0.35–0.38  0.89, 0.43, 0.34     0.0262 / 0.43–0.46  0.45, 1.01, 1.16 (1.01)
   10   1.13, 0.53, 0.48     0.0416 / 0.38–0.39  1.19, 0.57, 0.51     0.0417 / 0.45–0.46  0.35, 0.72, 0.80 (0.72)
   20   1.05, 0.65, 0.64     0.0622 / 0.43–0.44  1.43, 0.76, 0.74     0.0621 / 0.48–0.50  0.41, 0.67, 0.69 (0.67)

main's medians in its run 1.02 / 0.80 / 0.65. Again at 10:31 (load 5.7–6.3), main first: main 0.42–0.43 /
0.44–0.45 / 0.48–0.51 s, medians 0.88 / 0.76 / 0.65; this branch 0.35–0.36 / 0.36–0.39 / 0.42–0.44 s, medians
0.73 / 0.66 / 0.59 ("all goals met"; ARX's third repetition at k = 5 0.35 s, ratio 1.00). An earlier pair
(10:11, before the scan and the word listing): this branch 0.40–0.42 / 0.43–0.44 / 0.47–0.51 s, main
0.44–0.50 / 0.47–0.50 / 0.51–0.53. So ~0.06–0.08 s less CPU at every k (~15–17 %); k = 10 / 20 pass by the
median, k = 5 passed by the median in one of the two runs and fails against a fully warm ARX (0.30–0.35 s; ours
0.35–0.38). Adult ×33 (995,346 rows, ``--copies 33 --ks 10 --no-arx``), back to back:
4.86 s CPU against main's 6.97 (earlier pair 6.32 / 7.92), NCP 0.0013 both. Where a k = 5 call goes now (CPU s,
warm): phase 1 ~0.21 (the merge kernel and its first pricing), the split ~0.007, refine ~0.13 (move rounds ~0.07:
unit pricing ~0.03, the rest of ``_prices`` ~0.01, candidates ~0.009, ``_changed`` ~0.009, the round's own
Python and permutation ~0.02; dissolve rounds ~0.05: 630 dissolution pricings ~0.035, walks ~0.007; the first
mover ~0.008), encoding ~0.006, publishing ~0.008, the core's re-measurement and the rest ~0.010 (none of
these three has a cut worth its risk: factorizing the string QIs is most of the encoding).
Tried and dropped: the ceiling in the dissolution pricing (a cluster adding more than the dissolved one's loss
closed for that record: exact, ~2 % of the entries within it, but the listing and the clusters' own spans cost
as much as the seven-QI pass: 60 recorded calls 0.0063 → 0.0080 s with the own spans kept per round, 40 calls
3.5 → 6.5 ms with the word listing too: with ~6 records a call, its set-up per call dominates); an exact
bounded pricing (no ceiling: the two-QI bound against a running second price, seeded by the two least bounds:
~600 of 3,528 clusters listed, 0.069 → 0.10 s on the recorded calls); the listing as one branch-free pass per
cluster, with or without the bounds in a buffer first (0.040–0.043 s on the recorded calls, words: 0.030); a
ceiling from the candidates' savings only (the same CPU, more re-pricing). Left: the round's permutation of every
movable record (~0.25 ms a round; it feeds the seeded tie order), phase 1.

(tp28j, lead: CI's hypothesis search found a case where refine's kept prices made other moves than the fresh-price
reference, ``test_kept_prices_make_the_moves_of_fresh_prices``: the reference built its mover afresh after a dissolve
round, so records the kept path knew settled were candidates again and took the round's ``limit``. The reference now
carries the stamps across the round as the kept path does (production output unchanged); the case is an ``@example``.)

Issue 28, twelfth pass (phase 1) (branch tp28h, 2026-11-27 10:35, load 5–7): phase 1 only, the same steps
(``merge_units``'s groups byte-equal to 9df1025's at k = 5 / 10 / 20 on the recorded inputs; NCP at seeds 0–3
equal to main's:
0.026212 / 0.026271 / 0.026257 / 0.026318, 0.041707 / 0.042074 / 0.041771 / 0.042060, 0.062065 / 0.062528 /
0.062174 / 0.061643). Timed inside the kernel (thread CPU clock, k = 5): the 5,382 full scans are ~0.13 s of the
kernel's ~0.15 s (the bounds pass ~0.045, the bucket visits ~0.08), everything else in the loop ~0.03 s (8,585
steps, 1,024 lends, 29.5k heap pushes and pops, 10k two-candidate re-pricings); of the scans, 18 are first
pricings, 4,103 lazy clusters coming up, 1,261 merged small clusters none pointed at.

* A full pricing reads the listed buckets chained by the low code of their first-QI span, outwards from x's
  span; a side stops at the first code whose widened span alone prices above the best so far (sound where a
  wider span never costs less, checked per table: ``_widening``): 7.4M → 5.6M bucket bounds at k = 5.
* A listed bucket keeps its members' hull per QI (at least their largest low, at most their smallest high;
  widened as members enter, exact again at each compaction): every member's span holds it, so a bucket
  whose hull bound ``|x| · (D(x ∪ hull) − D(x)) + ...`` cannot win is skipped before a member is read: 898k
  → 370k bucket walks at k = 5 (~0.005–0.008 s of the visits: the visits are memory-latency bound, and the
  hull rows are reads too).
* The first pricing, where every point costs 0, prices a run's units from the pair's two QIs only (the
  other QIs add exactly 0.0: the same sums, the same partners; the naive test covers it): ``_near_prices``
  0.031 → 0.020 s at k = 5.

``merge_units`` alone (``time.process_time()``, best of 9, recorded Adult inputs, main then this branch, three
times): 0.197–0.200 → 0.179–0.184 / 0.219–0.221 → 0.195–0.202 / 0.226–0.228 → 0.204–0.211 s at k = 5 / 10 / 20
(−9 %); again at 10:40 (load 3.3–3.5): 0.182 → 0.168–0.172 / 0.202 → 0.188–0.190 / 0.208 → 0.195 s (−6–8 %).
End to end that is ~0.015–0.02 s of ~0.42 s, inside this load's run-to-run noise: ``--check --repeat 3`` back to
back (10:35, load 4.7–5.7; ours CPU s, median ratio to ARX in the same run):

    k   ARX (tp28h's run)    two-phase tp28h          ARX (main's run)     two-phase main (9df1025)
    5   0.79, 0.39, 0.29     0.46, 0.39, 0.40 (1.00)  0.76, 0.39, 0.34     0.45, 0.39, 0.39 (1.01)
   10   1.00, 0.50, 0.46     0.44, 0.42, 0.41 (0.84)  1.21, 0.54, 0.46     0.44, 0.41, 0.42 (0.77)
   20   0.93, 0.66, 0.61     0.46, 0.48, 0.46 (0.73)  0.89, 0.72, 0.68     0.47, 0.45, 0.45 (0.62)

(an earlier pair at 10:28: tp28h 1.12 / 0.85 / 0.71, main 1.02 at k = 5; a later one at 10:42, load 2.8–3.3: ours
0.38–0.40 / 0.40–0.41 / 0.44–0.45 s, main 0.41–0.42 / 0.43 / 0.46–0.49 s, medians 1.29 / 0.68 / 0.73 against main's
1.04 / 0.77 / 0.64, ARX's third repetitions 0.27 / 0.44 / 0.61 and 0.34 / 0.52 / 0.71 s). So k = 5 still passes or
fails by run against a warm ARX (0.27–0.34 s). Adult ×33 (995,346 rows), k = 10, ``--no-arx``: 7.19 s CPU (main 7.33
s right after), NCP 0.0013 both. Tried and dropped: an approximate full pricing (a candidate or bucket must beat the
best so far by a factor r: r = 1.1 / 1.2 saved ~0.015 / 0.023 s at k = 5 but moved NCP −1…+1.5 % by seed, k = 20
seed 0 0.062974 > 1.02 × the pin); phase 1 in Mondrian blocks of ≤ 16k / 8k rows (merge 0.197 → 0.141 / 0.111 s, NCP
+3.8 / +12.7 % at k = 5); a bucket bound adding the members' largest cost on the other QIs to the lender's term (no
bucket saved: 0.200 → 0.206 s); x's own bucket priced before the bounds pass (a tighter best early: no change);
``_best_of`` inlined (0.200 → 0.206 s); the hull bound in the bounds pass instead of before a visit (a sharper
cheapest bucket, but hull rows read for 1.76M opened buckets: 0.171 → 0.182 s). What is left in phase 1: the visits'
memory latency (~0.08 s for ~370k walks and ~900k hull reads, random ids) and the scan count (lazy clusters: only
466 of 4,103 lazy scans find their floor again, 1,557 their changed partner); per-bucket member arrays stored
contiguously (no linked-list chase) are the next thing to measure.

Run:  PYTHONPATH=$PWD /work/main/.venv/bin/python benchmarks/bench_local_recoding.py \\
          [--ks 5,10,20] [--algorithms two-phase,k-member] [--iterations 100] [--rows 0] [--check] [--repeat 3]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from _adult import ADULT, QIS, SHARED, load_adult
from bench_lattice import replicate

from privacy_plugins.core.anonymize import anonymize
from privacy_plugins.core.models import KAnonymity

PINS = {5: 0.0262, 10: 0.0419, 20: 0.0615}
#: Two-phase's NCP before the approximate phase-1 and refine rules (b0401b7): at most 2 % above these too.
BEFORE_APPROXIMATE = {5: 0.026297, 10: 0.041582, 20: 0.061787}
SENSITIVE = "occupation"


def ours(adult: Any, hierarchies: Any, algorithm: str, k: int, seed: int) -> dict[str, float]:
    """NCP, CPU and wall seconds of one run of ours (checked: passed, nothing lost)."""
    started, cpu = time.perf_counter(), time.process_time()
    result = anonymize(adult, algorithm=algorithm, quasi_identifiers=QIS, hierarchies=hierarchies,
                       models=[KAnonymity(k)], seed=seed, unlisted_columns="drop")  # fmt: skip
    cpu_s, wall_s = time.process_time() - cpu, time.perf_counter() - started
    assert result.passed and result.rows_in == result.rows_out + result.suppressed
    return {"ncp": result.utility.ncp, "cpu": cpu_s, "wall": wall_s}


def arx_worker(csv: Path) -> Any:
    """A started ARX worker with ``csv`` loaded, or ``None`` (said why) when the bundle or java is missing."""
    sys.path.insert(0, str(SHARED / "arx"))
    try:
        from arxclient import ArxWorker, available  # type: ignore[import-not-found]
    except ImportError:
        print(f"ARX skipped: no arxclient.py in {SHARED / 'arx'}")
        return None
    if not available():
        print("ARX skipped: java not found")
        return None
    worker = ArxWorker()
    worker.load(str(csv), str(ADULT), QIS, SENSITIVE)
    return worker


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--ks", default="5,10,20")
    parser.add_argument("--algorithms", default="two-phase,k-member")
    parser.add_argument("--iterations", type=int, default=100)
    parser.add_argument("--rows", type=int, default=0, help="first ROWS rows only (0: all; ARX then skipped)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--copies", type=int, default=1, help="Adult ×COPIES with age jitter")
    parser.add_argument("--no-arx", action="store_true")
    parser.add_argument("--check", action="store_true", help="assert the issue's goals")
    parser.add_argument("--profile", default="", help="cProfile one run of this algorithm at the first k")
    parser.add_argument("--repeat", type=int, default=1, help="runs per k (ARX then ours, back to back); median ratios")
    args = parser.parse_args()
    loaded = load_adult(args.rows)
    if loaded is None:
        return 0
    adult, hierarchies = loaded
    adult = replicate(adult, args.copies)
    ks = [int(k) for k in args.ks.split(",")]
    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        ours(adult, hierarchies, args.profile, ks[0], args.seed)
        profiler.disable()
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)
        return 0
    algorithms = args.algorithms.split(",")
    with tempfile.TemporaryDirectory() as scratch:
        csv = ADULT / "adult.csv"
        if args.copies > 1 and not (args.no_arx or args.rows):
            csv = Path(scratch) / "adult.csv"
            adult.to_csv(csv, sep=";", index=False)
        arx = None if args.no_arx or args.rows else arx_worker(csv)
        failures = compare(arx, adult, hierarchies, algorithms, ks, args)
    if args.check and failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        return 1
    if args.check:
        print("all goals met")
    return 0


def compare(arx: Any, adult: Any, hierarchies: Any, algorithms: list[str], ks: list[int], args: Any) -> list[str]:
    """Print ARX's and our rows per k and repetition (then the median ratios when repeated); the goals missed.

    With ``--repeat N`` every k runs N times, ARX then ours back to back, and the CPU goals are
    judged on the median ratio over the N runs (ARX's CPU varies ±30–50 % between runs).
    """
    failures: list[str] = []
    ratios: dict[tuple[str, int], list[float]] = {}
    ncps: dict[tuple[str, int], float] = {}
    try:
        if arx is not None:
            for _ in range(2):
                arx.local(ks[0], args.iterations)
        for algorithm in algorithms:  # our warm-up: numba loads its compiled kernels once per process
            ours(adult.iloc[:2000].reset_index(drop=True), hierarchies, algorithm, ks[0], args.seed)
        runs = f"{args.repeat} run(s) each"
        print(f"Adult {len(adult):,} rows, QIs {', '.join(QIS)}; seed {args.seed}; CPU seconds; {runs}")
        print(f"{'k':>3} {'run':>3} | {'ARX NCP':>8} {'cpu':>6} | "
              + " | ".join(f"{a:>10} NCP    cpu  /ARX" for a in algorithms))  # fmt: skip
        for repetition in range(args.repeat):
            for k in ks:
                a = arx.local(k, args.iterations) if arx is not None else None
                arx_cpu = a["process_cpu_ms"] / 1e3 if a else float("nan")
                cells = []
                for algorithm in algorithms:
                    row = ours(adult, hierarchies, algorithm, k, args.seed)
                    ratio = row["cpu"] / arx_cpu if a else float("nan")
                    ratios.setdefault((algorithm, k), []).append(ratio)
                    ncps[algorithm, k] = row["ncp"]
                    cells.append(f"{row['ncp']:14.4f} {row['cpu']:6.2f} {ratio:5.2f}")
                    if repetition:
                        continue
                    if algorithm == "two-phase" and k in PINS and args.copies == 1 and row["ncp"] > PINS[k] * 1.02:
                        failures.append(f"two-phase k={k}: NCP {row['ncp']:.4f} > 1.02 × {PINS[k]}")
                    before = BEFORE_APPROXIMATE.get(k, np.inf)
                    if algorithm == "two-phase" and args.copies == 1 and row["ncp"] > before * 1.02:
                        failures.append(f"two-phase k={k}: NCP {row['ncp']:.6f} > 1.02 × {before}")
                    if a and algorithm == "two-phase" and row["ncp"] >= a["ncp"]:
                        failures.append(f"two-phase k={k}: NCP {row['ncp']:.4f} not below ARX's {a['ncp']:.4f}")
                arx_cell = f"{a['ncp']:8.4f} {arx_cpu:6.2f}" if a else f"{'-':>8} {'-':>6}"
                print(f"{k:>3} {repetition + 1:>3} | {arx_cell} | " + " | ".join(cells), flush=True)
    finally:
        if arx is not None:
            arx.close()
    limits = {"two-phase": 1.0, "k-member": 2.0}
    for (algorithm, k), values in ratios.items():
        median = float(np.median(values))
        if args.repeat > 1:
            each = ", ".join(f"{v:.2f}" for v in values)
            print(f"{algorithm} k={k}: median CPU ratio to ARX {median:.2f} (runs: {each})")
        if algorithm == "two-phase" and k in BEFORE_APPROXIMATE and args.copies == 1:
            over = 100 * (ncps[algorithm, k] / BEFORE_APPROXIMATE[k] - 1)
            ncp = ncps[algorithm, k]
            print(f"two-phase k={k}: NCP {ncp:.6f}, {over:+.2f} % over b0401b7's (goal ≤ +2 %, aim ≤ +1 %)")
        if arx is not None and algorithm in limits and median > limits[algorithm]:
            failures.append(f"{algorithm} k={k}: CPU {median:.2f} × ARX's (median of {len(values)})")
    return failures


if __name__ == "__main__":
    sys.exit(main())
