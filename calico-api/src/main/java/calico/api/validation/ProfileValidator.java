package calico.api.validation;

import calico.api.model.Profile;
import calico.api.model.ProfileSpec;

/** Checks profiles: rules (without the policy-only direction checks) and the labels they apply. */
final class ProfileValidator {

    private static final FieldPath SPEC = FieldPath.of("spec");

    private ProfileValidator() {
    }

    static void validate(Profile profile, Errors errors) {
        MetadataValidator.validate(profile.metadata(), profile.resourceKind(), true, errors);
        ProfileSpec s = profile.spec();
        if (s == null) {
            return;
        }
        for (int i = 0; i < s.ingress().size(); i++) {
            RuleValidator.validate(s.ingress().get(i), SPEC.field("ingress").index(i), errors);
        }
        for (int i = 0; i < s.egress().size(); i++) {
            RuleValidator.validate(s.egress().get(i), SPEC.field("egress").index(i), errors);
        }
        MetadataValidator.labels(s.labelsToApply(), SPEC.field("labelsToApply"), errors);
    }
}
