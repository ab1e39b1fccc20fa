import org.deidentifier.arx.*;
import org.deidentifier.arx.criteria.KAnonymity;
import org.deidentifier.arx.metric.Metric;
import java.nio.file.*;
import java.util.*;

/**
 * ARX 3.9.2 local recoding on Adult, the anchor of benchmarks/bench_clustering.py.
 *
 * k-anonymity, loss metric, suppression limit 1 - 1/iterations, then
 * ARXResult.optimizeIterativeFast(output, 1/iterations) (ARX's documented local-recoding recipe);
 * prints the hierarchy-domain NCP of the output ((leaves under the value - 1) / (hierarchy rows - 1),
 * suppressed records 1 per QI; = ARX's 1 - granularity), the suppressed rows, the smallest class and
 * the wall milliseconds of anonymize + optimize, three times in one JVM (the first includes JIT warm-up).
 *
 * Build and run against the ARX bundle of ../shared/arx (no other dependency):
 *   CP=../shared/arx/arx-harness.jar:$(ls ../shared/arx/lib/*.jar | tr '\n' ':')
 *   javac -cp $CP -d /tmp/arxlr benchmarks/arx_local_recoding/LocalRec.java
 *   java -Xmx3g -cp /tmp/arxlr:$CP LocalRec ../shared/data/adult 5 100      # ADULT_DIR K ITERATIONS
 * Measured (2026-11-23, iterations 100): NCP 0.0307 (k=5), 0.0455 (k=10), 0.0637 (k=20), 0 suppressed.
 */
public class LocalRec {
    static List<String[]> read(Path p) throws Exception {
        List<String[]> out = new ArrayList<>();
        for (String line : Files.readAllLines(p)) if (!line.isEmpty()) out.add(line.split(";", -1));
        return out;
    }
    public static void main(String[] args) throws Exception {
        String dir = args[0];
        int k = Integer.parseInt(args[1]);
        int iterations = Integer.parseInt(args[2]);
        String[] qis = {"age", "education", "marital-status", "native-country", "race", "sex", "workclass"};
        List<String[]> rows = read(Paths.get(dir, "adult.csv"));
        Map<String, String[][]> hier = new HashMap<>();
        for (String q : qis) hier.put(q, read(Paths.get(dir, "adult_hierarchy_" + q + ".csv")).toArray(new String[0][]));
        for (int rep = 0; rep < 3; rep++) {
            Data.DefaultData data = Data.create();
            for (String[] r : rows) data.add(r);
            for (String q : qis) data.getDefinition().setAttributeType(q, AttributeType.Hierarchy.create(hier.get(q)));
            String[] header = rows.get(0);
            for (String h : header) if (!Arrays.asList(qis).contains(h)) data.getDefinition().setAttributeType(h, AttributeType.INSENSITIVE_ATTRIBUTE);
            ARXConfiguration config = ARXConfiguration.create();
            config.addPrivacyModel(new KAnonymity(k));
            config.setSuppressionLimit(1d - 1d / iterations);
            config.setQualityModel(Metric.createLossMetric(0d));
            long t0 = System.nanoTime();
            ARXResult result = new ARXAnonymizer().anonymize(data, config);
            DataHandle out = result.getOutput();
            result.optimizeIterativeFast(out, 1d / iterations);
            long ms = (System.nanoTime() - t0) / 1000000;
            double total = 0; int n = out.getNumRows(), suppressed = 0;
            for (String q : qis) {
                String[][] h = hier.get(q);
                Map<String, Integer> leaves = new HashMap<>();
                for (String[] r : h) { Set<String> seen = new HashSet<>(Arrays.asList(r)); for (String v : seen) leaves.merge(v, 1, Integer::sum); }
                int col = out.getColumnIndexOf(q);
                for (int i = 0; i < n; i++) {
                    if (out.isOutlier(i)) { total += 1; continue; }
                    String v = out.getValue(i, col);
                    Integer c = leaves.get(v);
                    if (c == null) throw new RuntimeException("unknown value " + v + " of " + q);
                    total += (c - 1) / (double) (h.length - 1);
                }
            }
            for (int i = 0; i < n; i++) if (out.isOutlier(i)) suppressed++;
            // smallest class among non-suppressed rows
            Map<String, Integer> classes = new HashMap<>();
            int[] cols = new int[qis.length];
            for (int j = 0; j < qis.length; j++) cols[j] = out.getColumnIndexOf(qis[j]);
            for (int i = 0; i < n; i++) { if (out.isOutlier(i)) continue; StringBuilder sb = new StringBuilder(); for (int c : cols) sb.append(out.getValue(i, c)).append('|'); classes.merge(sb.toString(), 1, Integer::sum); }
            int minClass = Collections.min(classes.values());
            System.out.printf("k=%d iterations=%d rep=%d ncp=%.4f suppressed=%d rows=%d min_class=%d ms=%d%n", k, iterations, rep, total / (n * qis.length), suppressed, n, minClass, ms);
        }
    }
}
