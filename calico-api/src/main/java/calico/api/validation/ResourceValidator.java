package calico.api.validation;

import calico.api.model.Resource;

/**
 * Applies Calico's defaults to a resource and validates it. PLACEHOLDER: the validation
 * helper replaces the body; the signature is the contract the datastore relies on.
 */
public final class ResourceValidator {

    private static final ResourceValidator INSTANCE = new ResourceValidator();

    public static ResourceValidator get() {
        return INSTANCE;
    }

    /**
     * {@return the resource with Calico's defaults applied}
     *
     * @throws ValidationException listing every invalid field
     */
    public <T extends Resource> T defaultAndValidate(T resource) {
        return resource;
    }
}
