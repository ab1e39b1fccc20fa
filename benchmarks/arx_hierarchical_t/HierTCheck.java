import org.deidentifier.arx.*;
import org.deidentifier.arx.criteria.HierarchicalDistanceTCloseness;
import org.deidentifier.arx.metric.Metric;
import java.io.*;
import java.nio.file.*;
import java.util.*;

/**
 * ARX 3.9.2's HierarchicalDistanceTCloseness on Adult, one full-domain node at a time: the anchor of
 * benchmarks/bench_t_hierarchical.py.
 *
 * Reads lines "L1,L2,...,L7 T" (generalization levels of the seven QIs in the order below, and a threshold t)
 * from stdin and answers "1" when ARX finds that node t-close for occupation along its hierarchy
 * (hierarchical ground distance, no suppression), "0" otherwise. Each query pins every QI's minimum and maximum
 * generalization to the node's level, so ARX's lattice is that one node and ARX's own criterion decides it.
 *
 * Build and run against the ARX bundle of ../shared/arx (no other dependency):
 *   CP=../shared/arx/arx-harness.jar:$(ls ../shared/arx/lib/*.jar | tr '\n' ':')
 *   javac -cp $CP -d /tmp/arxht benchmarks/arx_hierarchical_t/HierTCheck.java
 *   echo "1,1,1,1,1,1,1 0.2" | java -cp /tmp/arxht:$CP HierTCheck ../shared/data/adult
 */
public class HierTCheck {
    static final String[] QIS = {"age", "education", "marital-status", "native-country", "race", "sex", "workclass"};
    static final String SA = "occupation";

    static List<String[]> read(Path p) throws Exception {
        List<String[]> out = new ArrayList<>();
        for (String line : Files.readAllLines(p)) if (!line.isEmpty()) out.add(line.split(";", -1));
        return out;
    }

    public static void main(String[] args) throws Exception {
        String dir = args[0];
        List<String[]> rows = read(Paths.get(dir, "adult.csv"));
        Map<String, String[][]> hier = new HashMap<>();
        for (String q : QIS) hier.put(q, read(Paths.get(dir, "adult_hierarchy_" + q + ".csv")).toArray(new String[0][]));
        String[][] saHier = read(Paths.get(dir, "adult_hierarchy_" + SA + ".csv")).toArray(new String[0][]);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            line = line.trim();
            if (line.isEmpty()) continue;
            String[] parts = line.split(" ");
            String[] levels = parts[0].split(",");
            double t = Double.parseDouble(parts[1]);
            Data.DefaultData data = Data.create();
            for (String[] r : rows) data.add(r);
            for (int i = 0; i < QIS.length; i++) {
                data.getDefinition().setAttributeType(QIS[i], AttributeType.Hierarchy.create(hier.get(QIS[i])));
                int level = Integer.parseInt(levels[i]);
                data.getDefinition().setMinimumGeneralization(QIS[i], level);
                data.getDefinition().setMaximumGeneralization(QIS[i], level);
            }
            data.getDefinition().setAttributeType(SA, AttributeType.SENSITIVE_ATTRIBUTE);
            for (String h : rows.get(0)) {
                if (!Arrays.asList(QIS).contains(h) && !h.equals(SA)) {
                    data.getDefinition().setAttributeType(h, AttributeType.INSENSITIVE_ATTRIBUTE);
                }
            }
            ARXConfiguration config = ARXConfiguration.create();
            config.addPrivacyModel(new HierarchicalDistanceTCloseness(SA, t, AttributeType.Hierarchy.create(saHier)));
            config.setSuppressionLimit(0d);
            config.setQualityModel(Metric.createLossMetric(0d));
            ARXResult result = new ARXAnonymizer().anonymize(data, config);
            System.out.println(result.getGlobalOptimum() != null ? "1" : "0");
            System.out.flush();
        }
    }
}
