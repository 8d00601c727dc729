package calico.whisker.web;

import com.fasterxml.jackson.annotation.JsonInclude;
import org.springframework.http.HttpStatus;

/**
 * Every error this backend answers (API.md "Errors").
 *
 * @param parameter the one query parameter at fault, else absent
 */
public record ErrorBody(int status, String error, String message,
                        @JsonInclude(JsonInclude.Include.NON_NULL) String parameter) {

    public static ErrorBody of(int status, String message, String parameter) {
        HttpStatus s = HttpStatus.resolve(status);
        return new ErrorBody(status, s == null ? "Error" : s.getReasonPhrase(), message, parameter);
    }
}
