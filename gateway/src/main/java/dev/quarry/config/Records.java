package dev.quarry.config;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.RecordComponent;
import java.util.Map;

/**
 * Copies of a settings record with some components changed, so that a record of twenty settings
 * needs no wither listing all twenty (and none to edit when one is added). The record's canonical
 * constructor runs, with whatever checks it makes.
 */
public final class Records {
  private Records() {}

  /**
   * {@code record} with the named components set to the given values.
   *
   * @throws IllegalArgumentException when a name is not a component of the record, or a value is
   *                                  not of its type
   */
  public static <R extends Record> R with(R record, Map<String, ?> changes) {
    @SuppressWarnings("unchecked")
    Class<R> type = (Class<R>) record.getClass();
    RecordComponent[] components = type.getRecordComponents();
    Class<?>[] types = new Class<?>[components.length];
    Object[] values = new Object[components.length];
    int used = 0;
    try {
      for (int i = 0; i < components.length; i++) {
        types[i] = components[i].getType();
        String name = components[i].getName();
        if (changes.containsKey(name)) {
          values[i] = changes.get(name);
          used++;
        } else {
          values[i] = components[i].getAccessor().invoke(record);
        }
      }
      if (used != changes.size()) {
        throw new IllegalArgumentException(type.getSimpleName() + " has no component among " + changes.keySet());
      }
      return type.getDeclaredConstructor(types).newInstance(values);
    } catch (InvocationTargetException e) {
      if (e.getCause() instanceof RuntimeException r) {
        throw r;
      }
      throw new IllegalStateException(e.getCause());
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("cannot copy " + type.getSimpleName(), e);
    }
  }

  /** {@code record} with one component set to {@code value}. */
  public static <R extends Record> R with(R record, String component, Object value) {
    return with(record, Map.of(component, value));
  }
}
