package calico.cni.plugin;

import calico.cni.config.NetConf;
import calico.cni.spec.CniError;
import calico.cni.spec.CniRequest;
import calico.cni.spec.CniResult;
import calico.dataplane.netlink.IpPrefix;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Any IPAM plugin other than calico-ipam (e.g. {@code host-local}), run as the specification
 * says: the executable named by {@code ipam.type} found on {@code CNI_PATH}, with the caller's
 * environment ({@code CNI_COMMAND} ADD or DEL) and the same network configuration on stdin.
 * Its error object is passed on with its own code and message.
 */
public final class DelegatedIpam implements IpamBackend {
    private static final long TIMEOUT_SECONDS = 60;
    private final ObjectMapper json;

    public DelegatedIpam(ObjectMapper json) {
        this.json = json;
    }

    @Override
    public List<IpPrefix> assign(NetConf conf, CniRequest req, WorkloadId id, Map<String, String> namespaceLabels) {
        CniResult r = CniResult.parse(run(conf, req, "ADD"), "ipam result");
        List<IpPrefix> out = new ArrayList<>();
        for (CniResult.Ip ip : r.ips()) {
            IpPrefix p = IpPrefix.parse(ip.address());
            // The pod gets the address alone (/32, /128), as with Calico IPAM: routing is via 169.254.1.1.
            out.add(IpPrefix.host(p.address()));
        }
        if (out.isEmpty()) {
            throw new CniError(CniError.IPAM_FAILURE, "ipam: " + conf.ipam().type() + " returned no address");
        }
        return out;
    }

    @Override
    public void release(NetConf conf, CniRequest req, WorkloadId id) {
        run(conf, req, "DEL");
    }

    private JsonNode run(NetConf conf, CniRequest req, String command) {
        Path exe = find(conf.ipam().type(), req.optional("CNI_PATH"));
        ProcessBuilder pb = new ProcessBuilder(exe.toString());
        Map<String, String> env = pb.environment();
        env.clear();
        env.putAll(req.env());
        env.put("CNI_COMMAND", command);
        pb.redirectError(ProcessBuilder.Redirect.DISCARD);
        try {
            Process p = pb.start();
            try (OutputStream in = p.getOutputStream()) {
                in.write(json.writeValueAsBytes(conf.raw()));
            }
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new CniError(CniError.IPAM_FAILURE, "ipam: " + exe + " " + command + " did not finish in " + TIMEOUT_SECONDS + " s");
            }
            JsonNode result = out.length == 0 ? null : json.readTree(out);
            if (p.exitValue() != 0) {
                if (result != null && result.has("code")) {
                    throw new CniError(result.path("code").asInt(CniError.IPAM_FAILURE),
                            "ipam " + conf.ipam().type() + ": " + result.path("msg").asText(),
                            result.path("details").asText(""));
                }
                throw new CniError(CniError.IPAM_FAILURE, "ipam: " + exe + " " + command + " exited " + p.exitValue());
            }
            return result;
        } catch (IOException e) {
            throw new CniError(CniError.IO_FAILURE, "ipam: running " + exe + ": " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CniError(CniError.IO_FAILURE, "ipam: interrupted running " + exe);
        }
    }

    /** The plugin executable on CNI_PATH (a colon-separated list of directories). */
    static Path find(String type, String cniPath) {
        if (type.contains("/") || type.equals("..") || type.equals(".")) {
            throw new CniError(CniError.INVALID_CONFIG, "ipam.type: '" + type + "' is not a plugin name");
        }
        if (cniPath == null) {
            throw new CniError(CniError.INVALID_ENVIRONMENT, "CNI_PATH: is required to find the ipam plugin " + type);
        }
        for (String dir : cniPath.split(":")) {
            Path p = Path.of(dir, type);
            if (!dir.isEmpty() && Files.isExecutable(p)) {
                return p;
            }
        }
        throw new CniError(CniError.INVALID_CONFIG, "ipam.type: no plugin " + type + " on CNI_PATH " + cniPath);
    }

}
