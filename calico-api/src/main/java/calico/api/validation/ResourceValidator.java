package calico.api.validation;

import calico.api.model.BGPConfiguration;
import calico.api.model.BlockAffinity;
import calico.api.model.CalicoNodeStatus;
import calico.api.model.BGPFilter;
import calico.api.model.BGPPeer;
import calico.api.model.ClusterInformation;
import calico.api.model.FelixConfiguration;
import calico.api.model.GlobalNetworkPolicy;
import calico.api.model.GlobalNetworkSet;
import calico.api.model.HostEndpoint;
import calico.api.model.IPAMBlock;
import calico.api.model.IPAMConfiguration;
import calico.api.model.IPAMHandle;
import calico.api.model.IPPool;
import calico.api.model.IPReservation;
import calico.api.model.KubeControllersConfiguration;
import calico.api.model.KubernetesEndpointSlice;
import calico.api.model.KubernetesService;
import calico.api.model.NetworkPolicy;
import calico.api.model.NetworkSet;
import calico.api.model.Node;
import calico.api.model.Profile;
import calico.api.model.Resource;
import calico.api.model.StagedGlobalNetworkPolicy;
import calico.api.model.StagedKubernetesNetworkPolicy;
import calico.api.model.StagedNetworkPolicy;
import calico.api.model.Tier;
import calico.api.model.WorkloadEndpoint;
import java.util.Objects;

/**
 * Applies Calico's defaults to a resource and validates it. Defaults come first (as in
 * Calico's client), so validation sees what will be stored; every error of the resource is
 * collected and reported together in one {@link ValidationException}.
 *
 * <p>Stateless and immutable: one instance per {@link ValidationOptions}, safe to share.
 */
public final class ResourceValidator {

    private static final ResourceValidator INSTANCE = new ResourceValidator(ValidationOptions.DEFAULT);

    private final ValidationOptions options;

    private ResourceValidator(ValidationOptions options) {
        this.options = Objects.requireNonNull(options, "options");
    }

    /** {@return the validator for user-facing writes ({@link ValidationOptions#DEFAULT})} */
    public static ResourceValidator get() {
        return INSTANCE;
    }

    /** {@return a validator with other options}, e.g. for converted Kubernetes policies. */
    public static ResourceValidator with(ValidationOptions options) {
        return options.equals(ValidationOptions.DEFAULT) ? INSTANCE : new ResourceValidator(options);
    }

    public ValidationOptions options() {
        return options;
    }

    /**
     * {@return the resource with Calico's defaults applied}
     *
     * @throws ValidationException listing every invalid field
     */
    public <T extends Resource> T defaultAndValidate(T resource) {
        Objects.requireNonNull(resource, "resource");
        Resource defaulted = withDefaults(resource);
        Errors errors = new Errors();
        validate(defaulted, errors);
        if (!errors.isEmpty()) {
            throw new ValidationException(describe(resource), errors.toList());
        }
        @SuppressWarnings("unchecked")
        T out = (T) defaulted;
        return out;
    }

    /** {@return the resource with defaults applied}; never validates. */
    static Resource withDefaults(Resource r) {
        if (r instanceof GlobalNetworkPolicy p) {
            return new GlobalNetworkPolicy(p.metadata(), PolicyValidator.defaults(p.spec()));
        }
        if (r instanceof NetworkPolicy p) {
            return new NetworkPolicy(p.metadata(), PolicyValidator.defaults(p.spec()));
        }
        if (r instanceof StagedGlobalNetworkPolicy p) {
            return new StagedGlobalNetworkPolicy(p.metadata(), PolicyValidator.defaults(p.spec()));
        }
        if (r instanceof StagedNetworkPolicy p) {
            return new StagedNetworkPolicy(p.metadata(), PolicyValidator.defaults(p.spec()));
        }
        if (r instanceof Tier t) {
            return new Tier(t.metadata(), TierValidator.defaults(t.spec()));
        }
        if (r instanceof IPPool p) {
            return new IPPool(p.metadata(), IpPoolValidator.defaults(p.spec()));
        }
        if (r instanceof WorkloadEndpoint w) {
            return WorkloadEndpointValidator.defaults(w);
        }
        return r;
    }

    private void validate(Resource r, Errors errors) {
        if (r instanceof GlobalNetworkPolicy p) {
            PolicyValidator.validate(p, options, errors);
        } else if (r instanceof NetworkPolicy p) {
            PolicyValidator.validate(p, options, errors);
        } else if (r instanceof Tier t) {
            TierValidator.validate(t, errors);
        } else if (r instanceof Profile p) {
            ProfileValidator.validate(p, errors);
        } else if (r instanceof GlobalNetworkSet s) {
            MetadataValidator.validate(s.metadata(), s.resourceKind(), true, errors);
            NetworkSetValidator.validate(s.metadata(), s.spec() == null ? java.util.List.of() : s.spec().nets(), errors);
        } else if (r instanceof NetworkSet s) {
            MetadataValidator.validate(s.metadata(), s.resourceKind(), true, errors);
            NetworkSetValidator.validate(s.metadata(), s.spec() == null ? java.util.List.of() : s.spec().nets(), errors);
        } else if (r instanceof WorkloadEndpoint w) {
            WorkloadEndpointValidator.validate(w, errors);
        } else if (r instanceof StagedGlobalNetworkPolicy p) {
            PolicyValidator.validate(p, options, errors);
        } else if (r instanceof StagedNetworkPolicy p) {
            PolicyValidator.validate(p, options, errors);
        } else if (r instanceof HostEndpoint h) {
            HostEndpointValidator.validate(h, errors);
        } else if (r instanceof IPPool p) {
            IpPoolValidator.validate(p, errors);
        } else if (r instanceof IPReservation ipr) {
            IpReservationValidator.validate(ipr, errors);
        } else if (r instanceof BGPPeer p) {
            BgpValidator.validate(p, errors);
        } else if (r instanceof BGPConfiguration c) {
            BgpValidator.validate(c, errors);
        } else if (r instanceof BGPFilter f) {
            BgpValidator.validate(f, errors);
        } else if (r instanceof FelixConfiguration f) {
            FelixConfigurationValidator.validate(f, errors);
        } else if (r instanceof Node n) {
            NodeValidator.validate(n, errors);
        } else if (r instanceof IPAMBlock b) {
            IpamValidator.validate(b, errors);
        } else if (r instanceof BlockAffinity a) {
            IpamValidator.validate(a, errors);
        } else if (r instanceof IPAMHandle h) {
            IpamValidator.validate(h, errors);
        } else if (r instanceof IPAMConfiguration c) {
            IpamValidator.validate(c, errors);
        } else if (r instanceof KubeControllersConfiguration k) {
            KubeControllersConfigurationValidator.validate(k, errors);
        } else if (r instanceof CalicoNodeStatus c) {
            CalicoNodeStatusValidator.validate(c, errors);
        } else if (r instanceof StagedKubernetesNetworkPolicy
                || r instanceof ClusterInformation
                || r instanceof KubernetesService
                || r instanceof KubernetesEndpointSlice) {
            // Nothing Calico checks beyond metadata (the staged Kubernetes policy's spec is not modelled yet;
            // a KubernetesService or KubernetesEndpointSlice was checked by the Kubernetes API server that holds it).
            MetadataValidator.validate(r.metadata(), r.resourceKind(), true, errors);
        } else {
            throw new IllegalStateException("no validator for " + r.getClass().getName());
        }
    }

    private static String describe(Resource r) {
        String name = r.metadata() == null ? null : r.metadata().name();
        if (name == null || name.isEmpty()) {
            return r.resourceKind().kind() + "(<no name>)";
        }
        return r.key().toString();
    }
}
